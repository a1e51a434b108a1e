// nonzero, index.Tensor and masked_select: PyTorch's advanced-indexing rules (integer
// tensors, masks, None entries, broadcasting, adjacent and non-adjacent indices), strided
// inputs, 0-dim and empty cases, the meta device, and every error path.
#include <cmath>

#include "views_test_util.h"

namespace pith_e_test {
namespace {

class AdvancedIndexingTest : public KernelFixture {};

using Values_ = std::vector<double>;

Tensor Ints(const Shape &sizes, const std::vector<double> &v, pith_dtype dtype = PITH_INT64)
{
    return FromValues(sizes, dtype, v);
}

Tensor Mask(const Shape &sizes, const std::vector<double> &v, pith_dtype dtype = PITH_BOOL)
{
    return FromValues(sizes, dtype, v);
}

// x[indices] through the public API; NULL entries are None.
Tensor IndexOf(const pith_tensor *x, std::vector<const pith_tensor *> indices)
{
    return Tensor(pith_index(x, indices.data(), indices.size()));
}

// ---- nonzero ----

TEST_F(AdvancedIndexingTest, NonzeroGivesCoordinatesInRowMajorOrder)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, {0, 1, 0, 2, 0, 3});
    Tensor r(pith_nonzero(x.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_INT64);
    EXPECT_EQ(Sizes(r.get()), (Shape{3, 2}));
    EXPECT_EQ(Values(r.get()), (Values_{0, 1, 1, 0, 1, 2}));
}

TEST_F(AdvancedIndexingTest, NonzeroTreatsNegativeZeroAsZeroAndNanAsNonzero)
{
    Tensor x = FromValues({4}, PITH_FLOAT64, {-0.0, NAN, 0.0, -1});
    Tensor r(pith_nonzero(x.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Values(r.get()), (Values_{1, 3}));
    Tensor h(pith_to_dtype(x.get(), PITH_FLOAT16));
    Tensor rh(pith_nonzero(h.get()));
    ASSERT_NE(rh, nullptr) << pith_last_error();
    EXPECT_EQ(Values(rh.get()), (Values_{1, 3}));
}

TEST_F(AdvancedIndexingTest, NonzeroOfStridedInput)
{
    Tensor x = FromValues({2, 3}, PITH_INT32, {0, 5, 0, 7, 0, 9});
    Tensor t(pith_t(x.get())); // [[0, 7], [5, 0], [0, 9]]
    Tensor r(pith_nonzero(t.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{3, 2}));
    EXPECT_EQ(Values(r.get()), (Values_{0, 1, 1, 0, 2, 1}));
}

TEST_F(AdvancedIndexingTest, NonzeroOf0dimAndEmptyInputs)
{
    Tensor yes(pith_full(0, nullptr, 3, PITH_INT64)), no(pith_full(0, nullptr, 0, PITH_BOOL));
    Tensor ry(pith_nonzero(yes.get())), rn(pith_nonzero(no.get()));
    ASSERT_TRUE(ry && rn) << pith_last_error();
    EXPECT_EQ(Sizes(ry.get()), (Shape{1, 0}));
    EXPECT_EQ(Sizes(rn.get()), (Shape{0, 0}));
    const int64_t sizes[2] = {0, 3};
    Tensor empty(pith_zeros(2, sizes, PITH_FLOAT32));
    Tensor re(pith_nonzero(empty.get()));
    ASSERT_NE(re, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(re.get()), (Shape{0, 2}));
}

// Above the grain size the count and the fill run in chunks on several threads.
TEST_F(AdvancedIndexingTest, NonzeroLargeInputInParallelChunks)
{
    int threads = pith_get_num_threads();
    pith_set_num_threads(4);
    const int64_t n = 200003;
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; i++)
        v[i] = i % 3 == 1;
    Tensor x = FromValues({n}, PITH_BOOL, v);
    Tensor r(pith_nonzero(x.get()));
    pith_set_num_threads(threads);
    ASSERT_NE(r, nullptr) << pith_last_error();
    const int64_t count = (n + 1) / 3; // i = 1, 4, ..., n - 2
    ASSERT_EQ(Sizes(r.get()), (Shape{count, 1}));
    const int64_t *p = static_cast<const int64_t *>(pith_data_ptr(r.get()));
    int64_t wrong = 0;
    for (int64_t i = 0; i < count; i++)
        wrong += p[i] != 3 * i + 1;
    EXPECT_EQ(wrong, 0);
}

TEST_F(AdvancedIndexingTest, NonzeroOnMetaIsNotImplemented)
{
    Tensor x = MetaTensor({2, 3});
    EXPECT_EQ(pith_nonzero(x.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED,
                         "nonzero: the output shape depends on the data; not supported on the "
                         "meta device"));
}

// ---- index.Tensor: integer tensors ----

TEST_F(AdvancedIndexingTest, IndexRowsWithRepeatedAndNegativeIndices)
{
    Tensor x = Iota({3, 4});
    Tensor idx = Ints({3}, {2, 0, -1});
    Tensor r = IndexOf(x.get(), {idx.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{3, 4}));
    EXPECT_EQ(Values(r.get()), (Values_{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
    EXPECT_FALSE(pith_shares_storage(r.get(), x.get()));
}

TEST_F(AdvancedIndexingTest, IndexAfterNoneIndexesTheNextDim)
{
    Tensor x = Iota({3, 4});
    Tensor idx = Ints({2}, {3, 1}, PITH_INT32);
    Tensor r = IndexOf(x.get(), {nullptr, idx.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{3, 2}));
    EXPECT_EQ(Values(r.get()), (Values_{3, 1, 7, 5, 11, 9}));
}

TEST_F(AdvancedIndexingTest, IndexTensorsBroadcastTogether)
{
    Tensor x = Iota({3, 4});
    Tensor rows = Ints({2, 1}, {0, 2}), cols = Ints({2}, {1, 3});
    Tensor r = IndexOf(x.get(), {rows.get(), cols.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 2}));
    EXPECT_EQ(Values(r.get()), (Values_{1, 3, 9, 11}));
}

TEST_F(AdvancedIndexingTest, AdjacentIndicesKeepTheirPlace)
{
    Tensor x = Iota({2, 3, 4});
    Tensor a = Ints({2}, {2, 0}), b = Ints({2}, {1, 1});
    Tensor r = IndexOf(x.get(), {nullptr, a.get(), b.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 2}));
    EXPECT_EQ(Values(r.get()), (Values_{9, 1, 21, 13}));
}

TEST_F(AdvancedIndexingTest, NonAdjacentIndicesMoveTheirDimsToTheFront)
{
    Tensor x = Iota({2, 3, 4});
    Tensor a = Ints({2}, {1, 0}), b = Ints({2}, {3, 2});
    Tensor r = IndexOf(x.get(), {a.get(), nullptr, b.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 3}));
    EXPECT_EQ(Values(r.get()), (Values_{15, 19, 23, 2, 6, 10}));
}

TEST_F(AdvancedIndexingTest, Index0dimAndEmptyIndexTensors)
{
    Tensor x = Iota({3, 4});
    Tensor one = Ints({}, {1});
    Tensor r = IndexOf(x.get(), {one.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{4}));
    EXPECT_EQ(Values(r.get()), (Values_{4, 5, 6, 7}));
    const int64_t zero = 0;
    Tensor none(pith_empty(1, &zero, PITH_INT64));
    Tensor e = IndexOf(x.get(), {nullptr, none.get()});
    ASSERT_NE(e, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(e.get()), (Shape{3, 0}));
}

TEST_F(AdvancedIndexingTest, IndexOfStridedSelfAndIndex)
{
    Tensor x = Iota({3, 4});
    Tensor t(pith_t(x.get())); // [4, 3]: t[i][j] = 4 j + i
    Tensor wide = Ints({4}, {3, 9, 1, 9});
    Tensor idx(pith_slice(wide.get(), 0, 0, 4, 2)); // {3, 1}, stride 2
    Tensor r = IndexOf(t.get(), {idx.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 3}));
    EXPECT_EQ(Values(r.get()), (Values_{3, 7, 11, 1, 5, 9}));
}

TEST_F(AdvancedIndexingTest, IndexKeepsEveryDtype)
{
    Tensor base = FromValues({3}, PITH_FLOAT64, {1.5, -2, 0});
    Tensor idx = Ints({2}, {2, 0});
    for (pith_dtype dtype : pith_test::kAllDtypes) {
        Tensor x(pith_to_dtype(base.get(), dtype));
        Tensor r = IndexOf(x.get(), {idx.get()});
        ASSERT_NE(r, nullptr) << pith_dtype_name(dtype) << ": " << pith_last_error();
        EXPECT_EQ(pith_tensor_dtype(r.get()), dtype);
        EXPECT_EQ(At(r.get(), 0), At(x.get(), 2)) << pith_dtype_name(dtype);
        EXPECT_EQ(At(r.get(), 1), At(x.get(), 0)) << pith_dtype_name(dtype);
    }
}

// ---- index.Tensor: masks ----

TEST_F(AdvancedIndexingTest, MaskSelectsRows)
{
    Tensor x = Iota({3, 4});
    Tensor m = Mask({3}, {1, 0, 1});
    Tensor r = IndexOf(x.get(), {m.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 4}));
    EXPECT_EQ(Values(r.get()), (Values_{0, 1, 2, 3, 8, 9, 10, 11}));
}

TEST_F(AdvancedIndexingTest, MaskOfSeveralDimsIndexesThemAll)
{
    Tensor x = Iota({2, 3, 2});
    Tensor m = Mask({3, 2}, {1, 0, 0, 0, 0, 1}, PITH_UINT8);
    Tensor r = IndexOf(x.get(), {nullptr, m.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 2}));
    EXPECT_EQ(Values(r.get()), (Values_{0, 5, 6, 11}));
}

TEST_F(AdvancedIndexingTest, MaskBroadcastsWithIntegerIndices)
{
    Tensor x = Iota({3, 4});
    Tensor m = Mask({3}, {1, 0, 1}), cols = Ints({2}, {1, 2});
    Tensor r = IndexOf(x.get(), {m.get(), cols.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Values(r.get()), (Values_{1, 10}));
}

TEST_F(AdvancedIndexingTest, AllFalseMaskGivesAnEmptyResult)
{
    Tensor x = Iota({3, 4});
    Tensor m = Mask({3, 4}, std::vector<double>(12, 0));
    Tensor r = IndexOf(x.get(), {m.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{0}));
}

// See Note [Advanced indexing]: what Python's x[True] and x[False] become.
TEST_F(AdvancedIndexingTest, ZeroDimMaskAddsADimOfOneOrZero)
{
    Tensor x = Iota({3, 4});
    Tensor yes = Mask({}, {1}), no = Mask({}, {0});
    Tensor ry = IndexOf(x.get(), {nullptr, yes.get()});
    Tensor rn = IndexOf(x.get(), {no.get()});
    ASSERT_TRUE(ry && rn) << pith_last_error();
    EXPECT_EQ(Sizes(ry.get()), (Shape{3, 1, 4}));
    EXPECT_EQ(Values(ry.get()), Values(x.get()));
    EXPECT_EQ(Sizes(rn.get()), (Shape{0, 3, 4}));
}

// ---- index.Tensor: bounds ----

TEST_F(AdvancedIndexingTest, OutOfRangeIndexNamesItsIndexedDim)
{
    Tensor x = Iota({3, 4});
    Tensor five = Ints({1}, {5}), low = Ints({2}, {0, -4});
    EXPECT_EQ(IndexOf(x.get(), {five.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index 5 is out of bounds for dimension 0 with size 3"));
    EXPECT_EQ(IndexOf(x.get(), {low.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index -4 is out of bounds for dimension 0 with size 3"));
    // As PyTorch: the position among the indexed dims, not in self.
    EXPECT_EQ(IndexOf(x.get(), {nullptr, five.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index 5 is out of bounds for dimension 0 with size 4"));
    Tensor zero = Ints({1}, {0});
    EXPECT_EQ(IndexOf(x.get(), {zero.get(), five.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index 5 is out of bounds for dimension 1 with size 4"));
}

// PyTorch checks this from the shapes alone, even for an empty result and on meta.
TEST_F(AdvancedIndexingTest, IndexIntoAnEmptyDimIsOutOfBounds)
{
    const int64_t sizes[2] = {0, 0};
    Tensor x(pith_zeros(2, sizes, PITH_FLOAT32));
    Tensor zero = Ints({1}, {0});
    EXPECT_EQ(IndexOf(x.get(), {zero.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index is out of bounds for dimension with size 0"));
    Tensor m = MetaTensor({3, 0}), idx = MetaTensor({2}, PITH_INT64);
    EXPECT_EQ(IndexOf(m.get(), {nullptr, idx.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index is out of bounds for dimension with size 0"));
    const int64_t none = 0;
    Tensor empty(pith_empty(1, &none, PITH_INT64));
    Tensor r = IndexOf(x.get(), {empty.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{0, 0}));
}

// PyTorch's kernel never runs for an empty result, so it checks no bounds either.
TEST_F(AdvancedIndexingTest, EmptyResultChecksNoBounds)
{
    const int64_t sizes[2] = {0, 3};
    Tensor x(pith_zeros(2, sizes, PITH_FLOAT32));
    Tensor five = Ints({1}, {5});
    Tensor r = IndexOf(x.get(), {nullptr, five.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{0, 1}));
}

// ---- index.Tensor: validation ----

TEST_F(AdvancedIndexingTest, IndexDtypeMustBeIntegerOrMask)
{
    Tensor x = Iota({3, 4});
    Tensor f = FromValues({1}, PITH_FLOAT32, {0});
    Tensor i8 = Ints({1}, {0}, PITH_INT8);
    for (const pith_tensor *bad : {f.get(), i8.get()}) {
        EXPECT_EQ(IndexOf(x.get(), {bad}), nullptr);
        EXPECT_TRUE(HasError(PITH_ERR_INDEX,
                             "tensors used as indices must be long, int, byte or bool tensors"));
    }
}

TEST_F(AdvancedIndexingTest, TooManyIndices)
{
    Tensor x = Iota({3});
    Tensor zero = Ints({1}, {0});
    EXPECT_EQ(IndexOf(x.get(), {nullptr, zero.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "too many indices for tensor of dimension 1 (got 2)"));
    Tensor m = Mask({3, 1}, {1, 1, 1});
    EXPECT_EQ(IndexOf(x.get(), {m.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "too many indices for tensor of dimension 1 (got 2)"));
    Tensor s(pith_full(0, nullptr, 1, PITH_FLOAT32));
    EXPECT_EQ(IndexOf(s.get(), {zero.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "too many indices for tensor of dimension 0 (got 1)"));
}

TEST_F(AdvancedIndexingTest, MaskShapeMustMatchTheIndexedDims)
{
    Tensor x = Iota({3, 4});
    Tensor m = Mask({2}, {1, 0});
    EXPECT_EQ(IndexOf(x.get(), {m.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "The shape of the mask [2] at index 0 does not match "
                                         "the shape of the indexed tensor [3, 4] at index 0"));
    Tensor m2 = Mask({4, 4}, std::vector<double>(16, 1));
    EXPECT_EQ(IndexOf(x.get(), {m2.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "The shape of the mask [4, 4] at index 0 does not "
                                         "match the shape of the indexed tensor [3, 4] at index 0"));
}

TEST_F(AdvancedIndexingTest, IndicesThatDoNotBroadcastAreAnError)
{
    Tensor x = Iota({3, 4});
    Tensor a = Ints({2}, {0, 1}), b = Ints({3}, {0, 1, 2});
    EXPECT_EQ(IndexOf(x.get(), {a.get(), b.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "shape mismatch: indexing tensors could not be "
                                         "broadcast together with shapes [2], [3]"));
    Tensor m = Mask({3, 4}, {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    Tensor c = Ints({2}, {0, 1});
    Tensor y = Iota({3, 4, 2});
    EXPECT_EQ(IndexOf(y.get(), {m.get(), c.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "with shapes [3], [3], [2]"));
}

TEST_F(AdvancedIndexingTest, EmptyIndexListIsAnError)
{
    Tensor x = Iota({3});
    EXPECT_EQ(IndexOf(x.get(), {}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "at least one index must be provided"));
    EXPECT_EQ(pith_index(x.get(), nullptr, 1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "index: argument 'indices' is NULL"));
}

TEST_F(AdvancedIndexingTest, AllNoneIndexListCopiesSelf)
{
    Tensor x = Iota({2, 2});
    Tensor r = IndexOf(x.get(), {nullptr, nullptr});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Values(r.get()), (Values_{0, 1, 2, 3}));
    EXPECT_FALSE(pith_shares_storage(r.get(), x.get()));
}

// ---- index.Tensor: meta and the boxed path ----

TEST_F(AdvancedIndexingTest, IndexOnMetaComputesTheShape)
{
    Tensor x = MetaTensor({2, 3, 4});
    Tensor a = MetaTensor({5, 1}, PITH_INT64), b = MetaTensor({6}, PITH_INT32);
    Tensor r = IndexOf(x.get(), {a.get(), nullptr, b.get()});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(r.get()), PITH_META);
    EXPECT_EQ(Sizes(r.get()), (Shape{5, 6, 3}));
    Tensor m = MetaTensor({2}, PITH_BOOL);
    EXPECT_EQ(IndexOf(x.get(), {m.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED,
                         "index: indexing with a boolean mask gives a result whose shape "
                         "depends on the data; not supported on the meta device"));
    Tensor cpu_idx = Ints({1}, {0});
    EXPECT_EQ(IndexOf(x.get(), {cpu_idx.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Expected all tensors to be on the same device"));
}

TEST_F(AdvancedIndexingTest, BoxedCallTakesNoneEntries)
{
    Tensor x = Iota({3, 4});
    Tensor cols = Ints({1}, {2});
    const pith_tensor *list[2] = {nullptr, cols.get()};
    pith_stack *s = pith_stack_new();
    ASSERT_EQ(pith_stack_push_tensor(s, x.get()), PITH_OK);
    ASSERT_EQ(pith_stack_push_tensor_list(s, list, 2), PITH_OK);
    ASSERT_EQ(pith_call_boxed(pith_op_find("index.Tensor"), s), PITH_OK) << pith_last_error();
    ASSERT_EQ(pith_stack_size(s), 1u);
    Tensor r(pith_stack_get_tensor(s, 0));
    pith_stack_free(s);
    EXPECT_EQ(Sizes(r.get()), (Shape{3, 1}));
    EXPECT_EQ(Values(r.get()), (Values_{2, 6, 10}));
}

TEST_F(AdvancedIndexingTest, LargeGatherRunsInParallel)
{
    int threads = pith_get_num_threads();
    pith_set_num_threads(4);
    const int64_t rows = 40000;
    Tensor x = Iota({rows, 3}, PITH_INT32);
    Tensor xt(pith_t(x.get())); // [3, rows], non-contiguous rows
    std::vector<double> rev(rows);
    for (int64_t i = 0; i < rows; i++)
        rev[i] = (double)(-1 - i);
    Tensor idx = Ints({rows}, rev);
    Tensor r = IndexOf(xt.get(), {nullptr, idx.get()});
    pith_set_num_threads(threads);
    ASSERT_NE(r, nullptr) << pith_last_error();
    const int32_t *p = static_cast<const int32_t *>(pith_data_ptr(r.get()));
    int64_t wrong = 0;
    for (int64_t c = 0; c < 3; c++)
        for (int64_t i = 0; i < rows; i++)
            wrong += p[c * rows + i] != 3 * (rows - 1 - i) + c;
    EXPECT_EQ(wrong, 0);
}

// ---- masked_select ----

TEST_F(AdvancedIndexingTest, MaskedSelectBroadcastsSelfAndMask)
{
    Tensor x = Iota({3});
    Tensor m = Mask({2, 3}, {1, 0, 1, 0, 1, 0});
    Tensor r(pith_masked_select(x.get(), m.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{3}));
    EXPECT_EQ(Values(r.get()), (Values_{0, 2, 1}));
}

TEST_F(AdvancedIndexingTest, MaskedSelectErrors)
{
    Tensor x = Iota({2, 3});
    Tensor u8 = Mask({3}, {1, 0, 1}, PITH_UINT8);
    EXPECT_EQ(pith_masked_select(x.get(), u8.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "masked_select: expected BoolTensor for mask"));
    Tensor m = Mask({4}, {1, 0, 1, 0});
    EXPECT_EQ(pith_masked_select(x.get(), m.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "masked_select: The size of tensor a (3) must match "
                                         "the size of tensor b (4) at non-singleton dimension 1"));
    Tensor mx = MetaTensor({2, 3}), mm = MetaTensor({3}, PITH_BOOL);
    EXPECT_EQ(pith_masked_select(mx.get(), mm.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "masked_select: the output shape depends on "
                                                   "the data; not supported on the meta device"));
}

} // namespace
} // namespace pith_e_test
