// index_select, gather and embedding: values, strided inputs, 0-dim and empty cases, the
// meta device, and every bounds, dtype and shape error (checked before any copy).
#include "views_test_util.h"

namespace pith_e_test {
namespace {

class IndexingTest : public KernelFixture {};

using Values_ = std::vector<double>;

Tensor Index(const Shape &sizes, const std::vector<double> &v, pith_dtype dtype = PITH_INT64)
{
    return FromValues(sizes, dtype, v);
}

Tensor Meta(const Shape &sizes, pith_dtype dtype = PITH_FLOAT32)
{
    Shape strides(sizes.size(), 0);
    return Tensor(pith_empty_strided((int)sizes.size(), sizes.data(), strides.data(), dtype,
                                     PITH_META));
}

// ---- index_select ----

TEST_F(IndexingTest, IndexSelectRowsAndColumns)
{
    Tensor x = Iota({3, 4});
    Tensor rows_idx = Index({3}, {2, 0, 2});
    Tensor cols_idx = Index({2}, {3, 1}, PITH_INT32);
    Tensor rows(pith_index_select(x.get(), 0, rows_idx.get()));
    Tensor cols(pith_index_select(x.get(), -1, cols_idx.get()));
    ASSERT_TRUE(rows && cols) << pith_last_error();
    EXPECT_EQ(Sizes(rows.get()), (Shape{3, 4}));
    EXPECT_EQ(Values(rows.get()), (Values_{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
    EXPECT_EQ(Sizes(cols.get()), (Shape{3, 2}));
    EXPECT_EQ(Values(cols.get()), (Values_{3, 1, 7, 5, 11, 9}));
    EXPECT_FALSE(pith_shares_storage(rows.get(), x.get()));
}

TEST_F(IndexingTest, IndexSelectOfStridedSelfAndIndex)
{
    Tensor x = Iota({3, 4});
    Tensor t(pith_t(x.get())); // [4, 3]
    Tensor wide = Index({4}, {2, 9, 0, 9});
    Tensor idx(pith_slice(wide.get(), 0, 0, 4, 2)); // {2, 0}, stride 2
    Tensor r(pith_index_select(t.get(), 1, idx.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{4, 2}));
    EXPECT_EQ(Values(r.get()), (Values_{8, 0, 9, 1, 10, 2, 11, 3}));
}

TEST_F(IndexingTest, IndexSelectWithScalarIndexAndScalarSelf)
{
    Tensor x = Iota({3, 4});
    Tensor one = Index({}, {1});
    Tensor r(pith_index_select(x.get(), 0, one.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{1, 4}));
    EXPECT_EQ(Values(r.get()), (Values_{4, 5, 6, 7}));
    Tensor s(pith_full(0, nullptr, 42, PITH_INT16));
    Tensor zero = Index({1}, {0});
    Tensor rs(pith_index_select(s.get(), 0, zero.get()));
    ASSERT_NE(rs, nullptr) << pith_last_error();
    EXPECT_EQ(pith_ndim(rs.get()), 0);
    EXPECT_EQ(At(rs.get(), 0), 42);
}

TEST_F(IndexingTest, IndexSelectWithEmptyIndex)
{
    Tensor x = Iota({3, 4});
    const int64_t zero = 0;
    Tensor idx(pith_empty(1, &zero, PITH_INT64));
    Tensor r(pith_index_select(x.get(), 1, idx.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{3, 0}));
}

TEST_F(IndexingTest, IndexSelectOutOfRangeIsAnIndexError)
{
    Tensor x = Iota({3, 4});
    for (double bad : {3.0, -1.0}) {
        Tensor idx = Index({2}, {0, bad});
        EXPECT_EQ(pith_index_select(x.get(), 0, idx.get()), nullptr);
        EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index out of range in self"));
    }
}

TEST_F(IndexingTest, IndexSelectErrors)
{
    Tensor x = Iota({3, 4});
    Tensor f = FromValues({1}, PITH_FLOAT32, {0});
    EXPECT_EQ(pith_index_select(x.get(), 0, f.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "index_select(): Expected dtype int32 or int64 for index"));
    Tensor m = Index({1, 1}, {0});
    EXPECT_EQ(pith_index_select(x.get(), 0, m.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index_select(): Index is supposed to be a vector"));
    Tensor s(pith_full(0, nullptr, 1, PITH_FLOAT32));
    Tensor two = Index({2}, {0, 0});
    EXPECT_EQ(pith_index_select(s.get(), 0, two.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "index_select(): Index to scalar can have only 1 value, got 2 value(s)"));
    EXPECT_EQ(pith_index_select(x.get(), 2, two.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "Dimension out of range"));
}

TEST_F(IndexingTest, IndexSelectLarge)
{
    const int64_t rows = 50000;
    Tensor x = Iota({rows, 2}, PITH_INT32);
    std::vector<double> rev(rows);
    for (int64_t i = 0; i < rows; i++)
        rev[i] = (double)(rows - 1 - i);
    Tensor idx = Index({rows}, rev);
    Tensor r(pith_index_select(x.get(), 0, idx.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    const int32_t *p = static_cast<const int32_t *>(pith_data_ptr(r.get()));
    int64_t wrong = 0;
    for (int64_t i = 0; i < rows; i++)
        wrong += p[2 * i] != 2 * (rows - 1 - i) || p[2 * i + 1] != 2 * (rows - 1 - i) + 1;
    EXPECT_EQ(wrong, 0);
}

TEST_F(IndexingTest, IndexSelectOnMeta)
{
    Tensor x = Meta({5, 6});
    Tensor idx = Meta({3}, PITH_INT64);
    Tensor r(pith_index_select(x.get(), 1, idx.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(r.get()), PITH_META);
    EXPECT_EQ(Sizes(r.get()), (Shape{5, 3}));
    Tensor cpu_idx = Index({1}, {0});
    EXPECT_EQ(pith_index_select(x.get(), 0, cpu_idx.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Expected all tensors to be on the same device"));
}

// ---- gather ----

TEST_F(IndexingTest, GatherAlongEachDim)
{
    Tensor x = FromValues({2, 2}, PITH_FLOAT32, {1, 2, 3, 4});
    Tensor i1 = Index({2, 2}, {0, 0, 1, 0});
    Tensor i0 = Index({1, 2}, {1, 0}, PITH_INT32);
    Tensor g1(pith_gather(x.get(), 1, i1.get()));
    Tensor g0(pith_gather(x.get(), 0, i0.get()));
    ASSERT_TRUE(g1 && g0) << pith_last_error();
    EXPECT_EQ(Values(g1.get()), (Values_{1, 1, 4, 3}));
    EXPECT_EQ(Sizes(g0.get()), (Shape{1, 2}));
    EXPECT_EQ(Values(g0.get()), (Values_{3, 2}));
}

TEST_F(IndexingTest, GatherWithSmallerIndexAndStridedSelf)
{
    Tensor x = Iota({3, 4});
    Tensor t(pith_t(x.get())); // [4, 3]: t[i][j] = 4 j + i
    Tensor idx = Index({2, 2}, {2, 0, 1, 1});
    Tensor g(pith_gather(t.get(), 1, idx.get()));
    ASSERT_NE(g, nullptr) << pith_last_error();
    EXPECT_EQ(Values(g.get()), (Values_{8, 0, 5, 5}));
}

TEST_F(IndexingTest, GatherOfScalars)
{
    Tensor s(pith_full(0, nullptr, 9, PITH_FLOAT64));
    Tensor idx = Index({}, {0});
    Tensor g(pith_gather(s.get(), 0, idx.get()));
    ASSERT_NE(g, nullptr) << pith_last_error();
    EXPECT_EQ(pith_ndim(g.get()), 0);
    EXPECT_EQ(At(g.get(), 0), 9);
}

TEST_F(IndexingTest, GatherWithEmptyIndexSkipsTheChecks)
{
    Tensor x = Iota({2, 2});
    const int64_t sizes[] = {0, 5, 7};
    Tensor idx(pith_empty(3, sizes, PITH_FLOAT32)); // wrong dtype and rank, but empty
    Tensor g(pith_gather(x.get(), 0, idx.get()));
    ASSERT_NE(g, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(g.get()), (Shape{0, 5, 7}));
    EXPECT_EQ(pith_tensor_dtype(g.get()), PITH_FLOAT32);
}

TEST_F(IndexingTest, GatherErrors)
{
    Tensor x = Iota({2, 2});
    Tensor bad = Index({2, 2}, {0, 2, 1, 0});
    EXPECT_EQ(pith_gather(x.get(), 1, bad.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index 2 is out of bounds for dimension 1 with size 2"));
    Tensor neg = Index({1, 1}, {-1});
    EXPECT_EQ(pith_gather(x.get(), 0, neg.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index -1 is out of bounds for dimension 0 with size 2"));
    Tensor rank = Index({2}, {0, 1});
    EXPECT_EQ(pith_gather(x.get(), 0, rank.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "Index tensor must have the same number of dimensions as input tensor"));
    Tensor big = Index({3, 1}, {0, 0, 0});
    EXPECT_EQ(pith_gather(x.get(), 1, big.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "Size does not match at dimension 0 expected index [3, 1] to be smaller "
                         "than self [2, 2] apart from dimension 1"));
    Tensor f = FromValues({1, 1}, PITH_FLOAT32, {0});
    EXPECT_EQ(pith_gather(x.get(), 0, f.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "gather(): Expected dtype int32/int64 for index"));
    EXPECT_EQ(pith_gather(x.get(), -3, rank.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "Dimension out of range"));
}

TEST_F(IndexingTest, GatherLargeAndMeta)
{
    const int64_t n = 70000;
    Tensor x = Iota({n}, PITH_INT64);
    std::vector<double> idx(n);
    for (int64_t i = 0; i < n; i++)
        idx[i] = (double)((i * 7) % n);
    Tensor index = Index({n}, idx);
    Tensor g(pith_gather(x.get(), 0, index.get()));
    ASSERT_NE(g, nullptr) << pith_last_error();
    const int64_t *p = static_cast<const int64_t *>(pith_data_ptr(g.get()));
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; i++)
        wrong += p[i] != (i * 7) % n;
    EXPECT_EQ(wrong, 0);
    Tensor m = Meta({4, 5});
    Tensor mi = Meta({4, 2}, PITH_INT64);
    Tensor gm(pith_gather(m.get(), 1, mi.get()));
    ASSERT_NE(gm, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(gm.get()), PITH_META);
    EXPECT_EQ(Sizes(gm.get()), (Shape{4, 2}));
}

// ---- embedding ----

TEST_F(IndexingTest, EmbeddingLooksUpRows)
{
    Tensor w = Iota({4, 3});
    Tensor idx = Index({2, 2}, {1, 3, 0, 1});
    Tensor e(pith_embedding(w.get(), idx.get()));
    ASSERT_NE(e, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(e.get()), (Shape{2, 2, 3}));
    EXPECT_EQ(Values(e.get()), (Values_{3, 4, 5, 9, 10, 11, 0, 1, 2, 3, 4, 5}));
}

TEST_F(IndexingTest, EmbeddingWithInt32ScalarIndexAndStridedWeight)
{
    Tensor base = Iota({3, 4});
    Tensor w(pith_t(base.get())); // [4, 3]: row r = {r, r + 4, r + 8}
    Tensor idx = Index({}, {2}, PITH_INT32);
    Tensor e(pith_embedding(w.get(), idx.get()));
    ASSERT_NE(e, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(e.get()), (Shape{3}));
    EXPECT_EQ(Values(e.get()), (Values_{2, 6, 10}));
}

TEST_F(IndexingTest, EmbeddingAcceptsPaddingIdxThroughTheBoxedCall)
{
    Tensor w = Iota({3, 2});
    Tensor idx = Index({2}, {2, 0});
    pith_stack *s = pith_stack_new();
    pith_stack_push_tensor(s, w.get());
    pith_stack_push_tensor(s, idx.get());
    pith_stack_push_int(s, 0); // padding_idx: only changes gradients
    ASSERT_EQ(pith_call_boxed(pith_op_find("embedding"), s), PITH_OK) << pith_last_error();
    Tensor e(pith_stack_get_tensor(s, pith_stack_size(s) - 1));
    pith_stack_free(s);
    EXPECT_EQ(Values(e.get()), (Values_{4, 5, 0, 1}));
}

TEST_F(IndexingTest, EmbeddingErrors)
{
    Tensor w = Iota({4, 3});
    Tensor out = Index({2}, {0, 4});
    EXPECT_EQ(pith_embedding(w.get(), out.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index out of range in self"));
    Tensor neg = Index({1}, {-1});
    EXPECT_EQ(pith_embedding(w.get(), neg.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index out of range in self"));
    Tensor v = Iota({4});
    Tensor ok = Index({1}, {0});
    EXPECT_EQ(pith_embedding(v.get(), ok.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "'weight' must be 2-D"));
    Tensor f = FromValues({1}, PITH_FLOAT32, {0});
    EXPECT_EQ(pith_embedding(w.get(), f.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE,
                         "Expected tensor for argument #1 'indices' to have one of the following "
                         "scalar types: Long, Int; but got torch.FloatTensor instead (while "
                         "checking arguments for embedding)"));
}

TEST_F(IndexingTest, EmbeddingEmptyAndMeta)
{
    Tensor w = Iota({4, 3});
    const int64_t sizes[] = {2, 0};
    Tensor idx(pith_empty(2, sizes, PITH_INT64));
    Tensor e(pith_embedding(w.get(), idx.get()));
    ASSERT_NE(e, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(e.get()), (Shape{2, 0, 3}));
    Tensor mw = Meta({10, 8});
    Tensor mi = Meta({2, 5}, PITH_INT32);
    Tensor me(pith_embedding(mw.get(), mi.get()));
    ASSERT_NE(me, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(me.get()), PITH_META);
    EXPECT_EQ(Sizes(me.get()), (Shape{2, 5, 8}));
}

} // namespace
} // namespace pith_e_test
