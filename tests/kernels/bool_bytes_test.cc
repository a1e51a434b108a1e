// Note [Bool bytes]: a bool tensor over bytes other than 0 and 1 (here 2, 0, 255, wrapped
// with from_blob) reads as True, False, True in every op, and no load is undefined (the
// ASan+UBSan build, whose -fsanitize=bool traps a bool load of 2, runs this).
#include "views_test_util.h"

namespace pith_e_test {
namespace {

class BoolBytesTest : public KernelFixture {
protected:
    unsigned char bytes_[3] = {2, 0, 255};
    Tensor Wild()
    {
        const int64_t n = 3;
        Tensor t(pith_from_blob(bytes_, 1, &n, nullptr, PITH_BOOL, nullptr, nullptr));
        EXPECT_NE(t, nullptr) << pith_last_error();
        return t;
    }
    const std::vector<double> truth_{1, 0, 1};
};

TEST_F(BoolBytesTest, ElementReadsSeeTrue)
{
    Tensor t = Wild();
    EXPECT_EQ(Values(t.get()), truth_);
}

TEST_F(BoolBytesTest, ElementwiseOpsSeeTrue)
{
    Tensor t = Wild();
    Tensor no(pith_logical_not(t.get()));
    ASSERT_NE(no, nullptr) << pith_last_error();
    EXPECT_EQ(Values(no.get()), (std::vector<double>{0, 1, 0}));
    Tensor ones = FromValues({3}, PITH_BOOL, {1, 1, 1});
    Tensor eq(pith_eq(t.get(), ones.get()));
    ASSERT_NE(eq, nullptr) << pith_last_error();
    EXPECT_EQ(Values(eq.get()), truth_);
    Tensor both(pith_logical_and(t.get(), ones.get()));
    ASSERT_NE(both, nullptr) << pith_last_error();
    EXPECT_EQ(Values(both.get()), truth_);
    Tensor bits(pith_bitwise_and(t.get(), ones.get()));
    ASSERT_NE(bits, nullptr) << pith_last_error();
    EXPECT_EQ(Values(bits.get()), truth_);
    Tensor sum(pith_add(t.get(), t.get()));  // bool + bool is logical or
    ASSERT_NE(sum, nullptr) << pith_last_error();
    EXPECT_EQ(Values(sum.get()), truth_);
}

TEST_F(BoolBytesTest, CastsSeeOne)
{
    Tensor t = Wild();
    for (pith_dtype d : {PITH_UINT8, PITH_INT64, PITH_FLOAT16, PITH_FLOAT32, PITH_FLOAT64}) {
        Tensor c(pith_to_dtype(t.get(), d));
        ASSERT_NE(c, nullptr) << pith_last_error();
        EXPECT_EQ(Values(c.get()), truth_) << pith_dtype_name(d);
    }
}

TEST_F(BoolBytesTest, ReductionsSeeTrue)
{
    Tensor t = Wild();
    Tensor sum(pith_sum(t.get(), 0, nullptr, false));
    ASSERT_NE(sum, nullptr) << pith_last_error();
    EXPECT_EQ(Values(sum.get()), (std::vector<double>{2}));
    Tensor any(pith_any(t.get(), 0, nullptr, false));
    Tensor all(pith_all(t.get(), 0, nullptr, false));
    ASSERT_NE(any, nullptr);
    ASSERT_NE(all, nullptr);
    EXPECT_EQ(Values(any.get()), (std::vector<double>{1}));
    EXPECT_EQ(Values(all.get()), (std::vector<double>{0}));
    Tensor max(pith_amax(t.get(), 0, nullptr, false));
    ASSERT_NE(max, nullptr) << pith_last_error();
    EXPECT_EQ(Values(max.get()), (std::vector<double>{1}));
}

TEST_F(BoolBytesTest, MasksAndConditionsSeeTrue)
{
    Tensor t = Wild();
    Tensor x = FromValues({3}, PITH_FLOAT32, {10, 20, 30});
    Tensor y = FromValues({3}, PITH_FLOAT32, {-1, -2, -3});
    Tensor w(pith_where(t.get(), x.get(), y.get()));
    ASSERT_NE(w, nullptr) << pith_last_error();
    EXPECT_EQ(Values(w.get()), (std::vector<double>{10, -2, 30}));
    Tensor filled(pith_masked_fill(x.get(), t.get(), 0.0));
    ASSERT_NE(filled, nullptr) << pith_last_error();
    EXPECT_EQ(Values(filled.get()), (std::vector<double>{0, 20, 0}));
    const pith_tensor *mask[1] = {t.get()};
    Tensor picked(pith_index(x.get(), mask, 1));
    ASSERT_NE(picked, nullptr) << pith_last_error();
    EXPECT_EQ(Values(picked.get()), (std::vector<double>{10, 30}));
    Tensor selected(pith_masked_select(x.get(), t.get()));
    ASSERT_NE(selected, nullptr) << pith_last_error();
    EXPECT_EQ(Values(selected.get()), (std::vector<double>{10, 30}));
    Tensor nz(pith_nonzero(t.get()));
    ASSERT_NE(nz, nullptr) << pith_last_error();
    EXPECT_EQ(Values(nz.get()), (std::vector<double>{0, 2}));
}

TEST_F(BoolBytesTest, MatmulSeesTrue)
{
    const int64_t sizes[] = {1, 3};
    Tensor row(pith_from_blob(bytes_, 2, sizes, nullptr, PITH_BOOL, nullptr, nullptr));
    ASSERT_NE(row, nullptr) << pith_last_error();
    Tensor col = FromValues({3, 1}, PITH_BOOL, {1, 0, 0});
    Tensor prod(pith_matmul(row.get(), col.get()));
    ASSERT_NE(prod, nullptr) << pith_last_error();
    EXPECT_EQ(Values(prod.get()), (std::vector<double>{1}));
}

}  // namespace
}  // namespace pith_e_test
