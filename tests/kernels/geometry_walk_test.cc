// Kernels over the largest legal strides of Note [Geometry fits in int64]: a size-1 dim may
// carry a stride whose bytes nearly fill int64 over real memory of two elements, and every
// walk (elementwise engine, indexing.h's walk in gather and nonzero, index_select,
// reductions, copies) steps over it without overflowing (the ASan+UBSan build checks it).
// A view that would break the invariant is a clean error.
#include "views_test_util.h"

namespace pith_e_test {
namespace {

class GeometryWalkTest : public KernelFixture {
protected:
    alignas(8) float buf_[2] = {1.0f, 2.0f};
    // (1 * kHuge + 2 * 1) * 4 <= INT64_MAX: the largest stride of the size-1 dim.
    static constexpr int64_t kHuge = (INT64_MAX - 8) / 4;

    // [1, 2] over buf_ with the huge stride outside, or [2, 1] with it inside.
    Tensor Wrap(bool inner)
    {
        const int64_t sizes_outer[] = {1, 2}, strides_outer[] = {kHuge, 1};
        const int64_t sizes_inner[] = {2, 1}, strides_inner[] = {1, kHuge};
        Tensor t(pith_from_blob(buf_, 2, inner ? sizes_inner : sizes_outer,
                                inner ? strides_inner : strides_outer, PITH_FLOAT32, nullptr,
                                nullptr));
        EXPECT_NE(t, nullptr) << pith_last_error();
        return t;
    }
};

TEST_F(GeometryWalkTest, ElementwiseAndCopiesReadTheTwoElements)
{
    for (bool inner : {false, true}) {
        Tensor t = Wrap(inner);
        Tensor sum(pith_add(t.get(), t.get()));
        ASSERT_NE(sum, nullptr) << pith_last_error();
        EXPECT_EQ(Values(sum.get()), (std::vector<double>{2, 4})) << inner;
        Tensor copy(pith_contiguous(t.get()));
        ASSERT_NE(copy, nullptr) << pith_last_error();
        EXPECT_EQ(Values(copy.get()), (std::vector<double>{1, 2})) << inner;
        Tensor wide(pith_to_dtype(t.get(), PITH_FLOAT64));
        ASSERT_NE(wide, nullptr) << pith_last_error();
        EXPECT_EQ(Values(wide.get()), (std::vector<double>{1, 2})) << inner;
    }
}

TEST_F(GeometryWalkTest, ReductionsReadTheTwoElements)
{
    for (bool inner : {false, true}) {
        Tensor t = Wrap(inner);
        Tensor all(pith_sum(t.get(), 0, nullptr, false));
        ASSERT_NE(all, nullptr) << pith_last_error();
        EXPECT_EQ(Values(all.get()), (std::vector<double>{3})) << inner;
        const int dim = inner ? 1 : 0;
        Tensor along(pith_sum(t.get(), 1, &dim, false));
        ASSERT_NE(along, nullptr) << pith_last_error();
        EXPECT_EQ(Values(along.get()), (std::vector<double>{1, 2})) << inner;
    }
}

TEST_F(GeometryWalkTest, GatherNonzeroAndIndexSelectWalkTheHugeStride)
{
    for (bool inner : {false, true}) {
        Tensor t = Wrap(inner);
        const int d = inner ? 0 : 1;
        Tensor index = FromValues(inner ? Shape{2, 1} : Shape{1, 2}, PITH_INT64, {1, 0});
        Tensor gathered(pith_gather(t.get(), d, index.get()));
        ASSERT_NE(gathered, nullptr) << pith_last_error();
        EXPECT_EQ(Values(gathered.get()), (std::vector<double>{2, 1})) << inner;
        Tensor nz(pith_nonzero(t.get()));
        ASSERT_NE(nz, nullptr) << pith_last_error();
        EXPECT_EQ(Sizes(nz.get()), (Shape{2, 2})) << inner;
        Tensor rows = FromValues({2}, PITH_INT64, {1, 1});
        Tensor picked(pith_index_select(t.get(), d, rows.get()));
        ASSERT_NE(picked, nullptr) << pith_last_error();
        EXPECT_EQ(Values(picked.get()), (std::vector<double>{2, 2})) << inner;
    }
}

TEST_F(GeometryWalkTest, AViewThatWouldOverflowIsAValueError)
{
    Tensor t = Wrap(false);
    // unsqueeze(0) gives the new dim the stride 1 * kHuge: the extent counts it twice.
    EXPECT_EQ(pith_unsqueeze(t.get(), 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "overflows int64"));
    // A view inside the geometry is fine.
    Tensor row(pith_select(t.get(), 0, 0));
    ASSERT_NE(row, nullptr) << pith_last_error();
    EXPECT_EQ(Values(row.get()), (std::vector<double>{1, 2}));
}

TEST_F(GeometryWalkTest, ExpandingPastInt64BytesIsAValueError)
{
    Tensor one = FromValues({1}, PITH_FLOAT32, {5});
    const int64_t huge = INT64_C(1) << 62, fits = INT64_C(1) << 60;
    EXPECT_EQ(pith_expand(one.get(), 1, &huge), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "has more bytes than int64 holds"));
    Tensor big(pith_expand(one.get(), 1, &fits));
    ASSERT_NE(big, nullptr) << pith_last_error();
    EXPECT_EQ(pith_numel(big.get()), fits);
}

}  // namespace
}  // namespace pith_e_test
