// index_put_ and index_put: writes at integer and mask indices, broadcasting values,
// accumulation in every dtype, dtype conversion, values aliasing self, strided targets,
// the meta device and every error path (nothing is written when a check fails).
#include "views_test_util.h"

namespace pith_e_test {
namespace {

class IndexPutTest : public KernelFixture {};

using Values_ = std::vector<double>;

Tensor Ints(const Shape &sizes, const std::vector<double> &v, pith_dtype dtype = PITH_INT64)
{
    return FromValues(sizes, dtype, v);
}

Tensor Zeros(const Shape &sizes, pith_dtype dtype = PITH_FLOAT32)
{
    return Tensor(pith_zeros((int)sizes.size(), sizes.data(), dtype));
}

pith_status Put(pith_tensor *self, std::vector<const pith_tensor *> indices,
                const pith_tensor *values, bool accumulate = false)
{
    return pith_index_put_(self, indices.data(), indices.size(), values, accumulate);
}

TEST_F(IndexPutTest, WritesRowsAtIntegerIndices)
{
    Tensor x = Zeros({3, 2});
    Tensor idx = Ints({2}, {2, -3});
    Tensor v = FromValues({2, 2}, PITH_FLOAT32, {1, 2, 3, 4});
    ASSERT_EQ(Put(x.get(), {idx.get()}, v.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(x.get()), (Values_{3, 4, 0, 0, 1, 2}));
}

TEST_F(IndexPutTest, ValuesBroadcastToTheIndexedShape)
{
    Tensor x = Zeros({3, 4});
    Tensor idx = Ints({2}, {0, 2});
    Tensor row = FromValues({4}, PITH_FLOAT32, {1, 2, 3, 4});
    ASSERT_EQ(Put(x.get(), {idx.get()}, row.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(x.get()), (Values_{1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3, 4}));
    Tensor five(pith_full(0, nullptr, 5, PITH_FLOAT32));
    Tensor col = Ints({1}, {1});
    ASSERT_EQ(Put(x.get(), {nullptr, col.get()}, five.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(x.get()), (Values_{1, 5, 3, 4, 0, 5, 0, 0, 1, 5, 3, 4}));
}

TEST_F(IndexPutTest, RepeatedIndicesWithoutAccumulateKeepTheLastWrite)
{
    Tensor x = Zeros({3});
    Tensor idx = Ints({3}, {0, 0, 2});
    Tensor v = FromValues({3}, PITH_FLOAT32, {1, 2, 3});
    ASSERT_EQ(Put(x.get(), {idx.get()}, v.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(x.get()), (Values_{2, 0, 3}));
}

TEST_F(IndexPutTest, AccumulateAddsRepeatedIndices)
{
    Tensor x = FromValues({3}, PITH_FLOAT32, {10, 20, 30});
    Tensor idx = Ints({4}, {0, 0, 2, -3});
    Tensor v = FromValues({4}, PITH_FLOAT32, {1, 2, 3, 4});
    ASSERT_EQ(Put(x.get(), {idx.get()}, v.get(), true), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(x.get()), (Values_{17, 20, 33}));
}

TEST_F(IndexPutTest, AccumulateInEveryDtype)
{
    Tensor idx = Ints({2}, {1, 1});
    Tensor one(pith_full(0, nullptr, 1, PITH_FLOAT32));
    for (pith_dtype dtype : pith_test::kAllDtypes) {
        Tensor x = Zeros({2}, dtype);
        ASSERT_EQ(Put(x.get(), {idx.get()}, one.get(), true), PITH_OK)
            << pith_dtype_name(dtype) << ": " << pith_last_error();
        EXPECT_EQ(Values(x.get()), (Values_{0, dtype == PITH_BOOL ? 1.0 : 2.0}))
            << pith_dtype_name(dtype);
    }
}

TEST_F(IndexPutTest, AccumulateWrapsIntegers)
{
    Tensor x = FromValues({1}, PITH_INT8, {127});
    Tensor idx = Ints({1}, {0});
    Tensor one = FromValues({1}, PITH_INT8, {1});
    ASSERT_EQ(Put(x.get(), {idx.get()}, one.get(), true), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(x.get()), (Values_{-128}));
}

TEST_F(IndexPutTest, ValuesAreConvertedToSelfsDtype)
{
    Tensor x = Zeros({3}, PITH_INT64);
    Tensor idx = Ints({2}, {0, 2});
    Tensor v = FromValues({2}, PITH_FLOAT64, {2.7, -1.5});
    ASSERT_EQ(Put(x.get(), {idx.get()}, v.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(x.get()), PITH_INT64);
    EXPECT_EQ(Values(x.get()), (Values_{2, 0, -1}));
}

TEST_F(IndexPutTest, WritesAtAMask)
{
    Tensor x = Iota({2, 3});
    Tensor m = FromValues({2, 3}, PITH_BOOL, {1, 0, 0, 0, 1, 1});
    Tensor v = FromValues({3}, PITH_FLOAT32, {-1, -2, -3});
    ASSERT_EQ(Put(x.get(), {m.get()}, v.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(x.get()), (Values_{-1, 1, 2, 3, -2, -3}));
}

TEST_F(IndexPutTest, NonAdjacentIndicesTakeValuesInTheirFrontShape)
{
    Tensor x = Zeros({2, 3, 2});
    Tensor a = Ints({2}, {0, 1}), b = Ints({2}, {1, 0});
    // x[a, :, b] has shape [2, 3]: row k is x[a[k], :, b[k]].
    Tensor v = FromValues({2, 3}, PITH_FLOAT32, {1, 2, 3, 4, 5, 6});
    ASSERT_EQ(Put(x.get(), {a.get(), nullptr, b.get()}, v.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(x.get()), (Values_{0, 1, 0, 2, 0, 3, 4, 0, 5, 0, 6, 0}));
}

TEST_F(IndexPutTest, WritesThroughAStridedView)
{
    Tensor base = Zeros({2, 3});
    Tensor t(pith_t(base.get())); // [3, 2]
    Tensor idx = Ints({1}, {2});
    Tensor v = FromValues({2}, PITH_FLOAT32, {7, 8});
    ASSERT_EQ(Put(t.get(), {idx.get()}, v.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(base.get()), (Values_{0, 0, 7, 0, 0, 8}));
}

TEST_F(IndexPutTest, ValuesThatAliasSelfAreReadBeforeWriting)
{
    Tensor x = FromValues({4}, PITH_FLOAT32, {0, 1, 2, 3});
    Tensor head(pith_slice(x.get(), 0, 0, 3, 1));
    Tensor idx = Ints({3}, {1, 2, 3});
    ASSERT_EQ(Put(x.get(), {idx.get()}, head.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(x.get()), (Values_{0, 0, 1, 2}));
}

TEST_F(IndexPutTest, BumpsTheVersionCounter)
{
    Tensor x = Zeros({3});
    Tensor idx = Ints({1}, {0});
    Tensor one(pith_full(0, nullptr, 1, PITH_FLOAT32));
    int64_t before = pith_version_counter(x.get());
    ASSERT_EQ(Put(x.get(), {idx.get()}, one.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(pith_version_counter(x.get()), before + 1);
}

TEST_F(IndexPutTest, EmptyIndexWritesNothingAndChecksNoBounds)
{
    Tensor x = Zeros({0, 3});
    Tensor five = Ints({1}, {5});
    Tensor one(pith_full(0, nullptr, 1, PITH_FLOAT32));
    EXPECT_EQ(Put(x.get(), {nullptr, five.get()}, one.get()), PITH_OK) << pith_last_error();
}

TEST_F(IndexPutTest, LargeWriteRunsInParallel)
{
    int threads = pith_get_num_threads();
    pith_set_num_threads(4);
    const int64_t n = 100000;
    Tensor x = Zeros({n}, PITH_INT64);
    std::vector<double> rev(n), vals(n);
    for (int64_t i = 0; i < n; i++) {
        rev[i] = (double)(n - 1 - i);
        vals[i] = (double)i;
    }
    Tensor idx = Ints({n}, rev), v = Ints({n}, vals);
    pith_status status = Put(x.get(), {idx.get()}, v.get());
    pith_set_num_threads(threads);
    ASSERT_EQ(status, PITH_OK) << pith_last_error();
    const int64_t *p = static_cast<const int64_t *>(pith_data_ptr(x.get()));
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; i++)
        wrong += p[i] != n - 1 - i;
    EXPECT_EQ(wrong, 0);
}

// ---- errors: nothing is written ----

TEST_F(IndexPutTest, ValuesThatDoNotBroadcastAreAnError)
{
    Tensor x = Zeros({3, 2});
    Tensor idx = Ints({2}, {0, 1});
    Tensor three = Zeros({3});
    EXPECT_EQ(Put(x.get(), {nullptr, idx.get()}, three.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "shape mismatch: value tensor of shape [3] cannot be "
                                         "broadcast to indexing result of shape [3, 2]"));
    // As in PyTorch, values may not have more dims than the result, even of size one.
    Tensor lead = Zeros({1, 2, 2});
    EXPECT_EQ(Put(x.get(), {idx.get()}, lead.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "value tensor of shape [1, 2, 2] cannot be broadcast "
                                         "to indexing result of shape [2, 2]"));
}

TEST_F(IndexPutTest, OutOfRangeWritesNothing)
{
    Tensor x = Zeros({3});
    Tensor idx = Ints({2}, {0, 3});
    Tensor one(pith_full(0, nullptr, 1, PITH_FLOAT32));
    int64_t before = pith_version_counter(x.get());
    EXPECT_EQ(Put(x.get(), {idx.get()}, one.get()), PITH_ERR_INDEX);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index 3 is out of bounds for dimension 0 with size 3"));
    EXPECT_EQ(Values(x.get()), (Values_{0, 0, 0}));
    EXPECT_EQ(pith_version_counter(x.get()), before);
}

TEST_F(IndexPutTest, BadIndexAndDeviceErrors)
{
    Tensor x = Zeros({3});
    Tensor f = FromValues({1}, PITH_FLOAT32, {0});
    Tensor one(pith_full(0, nullptr, 1, PITH_FLOAT32));
    EXPECT_EQ(Put(x.get(), {f.get()}, one.get()), PITH_ERR_INDEX);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "tensors used as indices must be long, int, byte or "
                                         "bool tensors"));
    Tensor idx = Ints({1}, {0});
    Tensor meta_one = MetaTensor({});
    EXPECT_EQ(Put(x.get(), {idx.get()}, meta_one.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "index_put_: Expected all tensors to be on the same "
                                         "device"));
    EXPECT_EQ(pith_index_put_(x.get(), nullptr, 1, one.get(), false), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "argument 'indices' is NULL"));
    EXPECT_EQ(pith_index_put_(x.get(), nullptr, 0, nullptr, false), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "argument 'values' is NULL"));
}

// ---- index_put (functional) and meta ----

TEST_F(IndexPutTest, FunctionalFormLeavesSelfUnchanged)
{
    Tensor x = Iota({3});
    Tensor idx = Ints({1}, {1});
    Tensor v(pith_full(0, nullptr, 9, PITH_FLOAT32));
    const pith_tensor *list[1] = {idx.get()};
    Tensor r(pith_index_put(x.get(), list, 1, v.get(), true));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Values(r.get()), (Values_{0, 10, 2}));
    EXPECT_EQ(Values(x.get()), (Values_{0, 1, 2}));
    EXPECT_FALSE(pith_shares_storage(r.get(), x.get()));
}

TEST_F(IndexPutTest, OnMetaValidatesAndReturnsSelf)
{
    Tensor x = MetaTensor({4, 3});
    Tensor idx = MetaTensor({2}, PITH_INT64), v = MetaTensor({2, 3});
    const pith_tensor *list[1] = {idx.get()};
    ASSERT_EQ(pith_index_put_(x.get(), list, 1, v.get(), false), PITH_OK) << pith_last_error();
    Tensor bad = MetaTensor({4});
    EXPECT_EQ(pith_index_put_(x.get(), list, 1, bad.get(), false), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "value tensor of shape [4] cannot be broadcast"));
    Tensor m = MetaTensor({4}, PITH_BOOL);
    const pith_tensor *masks[1] = {m.get()};
    EXPECT_EQ(pith_index_put_(x.get(), masks, 1, v.get(), false), PITH_ERR_NOT_IMPLEMENTED);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "index_put_: indexing with a boolean mask"));
}

} // namespace
} // namespace pith_e_test
