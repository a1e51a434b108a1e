// var, std (with correction), all and any: values against double references for every
// dtype and layout, result dtypes, empty inputs, errors, large inputs and Meta.
#include "reduce_test_util.h"

namespace pith_d_test {
namespace {

using ReduceStats = ReduceFixture;

/* m2 / max(0, n - correction), from a two-pass sum in double. */
double RefVar(const std::vector<double> &g, double correction)
{
    double mean = 0, m2 = 0;
    for (double x : g)
        mean += x;
    mean /= (double)g.size();
    for (double x : g)
        m2 += (x - mean) * (x - mean);
    double divisor = (double)g.size() - correction;
    return g.empty() ? NAN : m2 / (divisor > 0 ? divisor : 0);
}

TEST_F(ReduceStats, VarAndStdMatchReferenceForEveryFloatDtypeAndCorrection)
{
    std::mt19937 rng(51);
    for (pith_dtype dtype : kFloatDtypes) {
        for (Layout layout : kLayouts) {
            for (int iter = 0; iter < 30; iter++) {
                Shape sizes = RandomShape(rng, 4, 5, true);
                Tensor x = MakeTensor(rng, sizes, dtype, layout, -1, 3);
                DimsCase c = RandomDims(rng, (int)sizes.size());
                bool keepdim = rng() & 1;
                double correction = std::vector<double>{0, 1, 2.5}[rng() % 3];
                auto groups = Groups(sizes, Values(x.get()), c.mask);
                for (bool take_sqrt : {false, true}) {
                    int n = (int)c.dims.size();
                    Tensor r(take_sqrt ? pith_std(x.get(), n, c.dims.data(), correction, keepdim)
                                       : pith_var(x.get(), n, c.dims.data(), correction, keepdim));
                    ASSERT_NE(r, nullptr) << pith_last_error();
                    EXPECT_EQ(pith_tensor_dtype(r.get()), dtype);
                    EXPECT_EQ(Sizes(r.get()), ReducedShape(sizes, c.mask, keepdim));
                    std::vector<double> want, tol;
                    for (auto &g : groups) {
                        double v = RefVar(g, correction);
                        want.push_back(take_sqrt ? std::sqrt(v) : v);
                        tol.push_back(OutputPrecision(dtype) * std::fabs(want.back()) + 1e-12);
                    }
                    EXPECT_TRUE(AllClose(r.get(), want, tol))
                        << pith_dtype_name(dtype) << " correction " << correction
                        << (take_sqrt ? " std" : " var");
                }
            }
        }
    }
}

TEST_F(ReduceStats, DefaultCorrectionIsOne)
{
    Tensor x = FromValues({4}, PITH_FLOAT64, {1, 2, 3, 4});
    Tensor r = CallBoxed("var.correction", [&](pith_stack *s) { pith_stack_push_tensor(s, x.get()); });
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Values(r.get()), std::vector<double>{5.0 / 3.0});
    Tensor i = CallBoxed("std.correction", [&](pith_stack *s) {
        pith_stack_push_tensor(s, x.get());
        pith_stack_push_none(s);
        pith_stack_push_bool(s, false);
        pith_stack_push_int(s, 0);
    });
    ASSERT_NE(i, nullptr) << pith_last_error();
    EXPECT_EQ(Values(i.get()), std::vector<double>{std::sqrt(1.25)});
}

TEST_F(ReduceStats, CorrectionAtLeastTheCountGivesInfOrNan)
{
    Tensor x = FromValues({2}, PITH_FLOAT32, {1, 3});
    Tensor inf(pith_var(x.get(), 0, nullptr, 2, false));
    ASSERT_NE(inf, nullptr);
    EXPECT_EQ(Values(inf.get()), std::vector<double>{INFINITY});
    Tensor one = FromValues({1}, PITH_FLOAT32, {7});
    Tensor nan(pith_std(one.get(), 0, nullptr, 1, false));
    ASSERT_NE(nan, nullptr);
    EXPECT_TRUE(std::isnan(Values(nan.get())[0]));
    Tensor zero(pith_var(one.get(), 0, nullptr, 0, false));
    ASSERT_NE(zero, nullptr);
    EXPECT_EQ(Values(zero.get()), std::vector<double>{0});
}

TEST_F(ReduceStats, VarOfAnEmptyReductionIsNan)
{
    Tensor x = FromValues({0, 2}, PITH_FLOAT64, {});
    int dim = 0;
    Tensor r(pith_var(x.get(), 1, &dim, 1, false));
    ASSERT_NE(r, nullptr);
    auto v = Values(r.get());
    ASSERT_EQ(v.size(), 2u);
    EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
}

TEST_F(ReduceStats, VarOfIntegersIsATypeError)
{
    for (pith_dtype dtype : {PITH_BOOL, PITH_UINT8, PITH_INT64}) {
        Tensor x = FromValues({2}, dtype, {1, 0});
        EXPECT_EQ(pith_var(x.get(), 0, nullptr, 1, false), nullptr);
        EXPECT_TRUE(HasError(PITH_ERR_TYPE, "std and var only support floating point"));
        EXPECT_EQ(pith_std(x.get(), 0, nullptr, 1, false), nullptr);
        EXPECT_TRUE(HasError(PITH_ERR_TYPE, "std:"));
    }
}

TEST_F(ReduceStats, LargeVarIsAccurateWithALargeMean)
{
    /* Values around 1e4 with unit spread: a one-pass sum of squares would lose it. */
    std::mt19937 rng(61);
    Shape sizes = {1000, 257};
    std::vector<double> v = RandomValues(rng, Numel(sizes), PITH_FLOAT64, 1e4, 1e4 + 2);
    Tensor x = FromValues(sizes, PITH_FLOAT32, v);
    auto vals = Values(x.get());
    for (uint32_t mask : {1u, 2u, 3u}) {
        std::vector<int> dims;
        for (int d = 0; d < 2; d++)
            if (mask & (1u << d))
                dims.push_back(d);
        Tensor r(pith_var(x.get(), (int)dims.size(), dims.data(), 1, false));
        ASSERT_NE(r, nullptr);
        std::vector<double> want, tol;
        for (auto &g : Groups(sizes, vals, mask)) {
            want.push_back(RefVar(g, 1));
            tol.push_back(1e-5 * want.back());
        }
        EXPECT_TRUE(AllClose(r.get(), want, tol)) << "mask " << mask;
    }
}

/* ---- all / any ---- */

TEST_F(ReduceStats, AllAndAnyMatchReferenceForEveryDtypeAndLayout)
{
    std::mt19937 rng(71);
    for (pith_dtype dtype : kAllDtypes) {
        pith_dtype out_dtype = dtype == PITH_UINT8 ? PITH_UINT8 : PITH_BOOL;
        for (Layout layout : kLayouts) {
            for (int iter = 0; iter < 30; iter++) {
                Shape sizes = RandomShape(rng, 4, 4, true);
                /* Few distinct values, so that zeros are common. */
                Tensor x = MakeTensor(rng, sizes, dtype, layout, -1, 1, 1);
                DimsCase c = RandomDims(rng, (int)sizes.size());
                bool keepdim = rng() & 1;
                auto groups = Groups(sizes, Values(x.get()), c.mask);
                for (bool all : {true, false}) {
                    int n = (int)c.dims.size();
                    Tensor r(all ? pith_all(x.get(), n, c.dims.data(), keepdim)
                                 : pith_any(x.get(), n, c.dims.data(), keepdim));
                    ASSERT_NE(r, nullptr) << pith_last_error();
                    EXPECT_EQ(pith_tensor_dtype(r.get()), out_dtype);
                    EXPECT_EQ(Sizes(r.get()), ReducedShape(sizes, c.mask, keepdim));
                    std::vector<double> want, tol(groups.size(), 0);
                    for (auto &g : groups) {
                        bool v = all;
                        for (double e : g)
                            v = all ? (v && e != 0) : (v || e != 0);
                        want.push_back(v);
                    }
                    EXPECT_TRUE(AllClose(r.get(), want, tol))
                        << pith_dtype_name(dtype) << (all ? " all" : " any");
                }
            }
        }
    }
}

TEST_F(ReduceStats, NanIsTrueAndNegativeZeroIsFalse)
{
    for (pith_dtype dtype : kFloatDtypes) {
        Tensor x = FromValues({3}, dtype, {NAN, 1, -0.0});
        int dim = 0;
        Tensor a(pith_all(x.get(), 0, nullptr, false));
        ASSERT_NE(a, nullptr);
        EXPECT_EQ(Values(a.get()), std::vector<double>{0}) << pith_dtype_name(dtype);
        Tensor nz = FromValues({2}, dtype, {NAN, -0.0});
        Tensor b(pith_any(nz.get(), 1, &dim, false));
        ASSERT_NE(b, nullptr);
        EXPECT_EQ(Values(b.get()), std::vector<double>{1}) << pith_dtype_name(dtype);
        Tensor z = FromValues({1}, dtype, {-0.0});
        Tensor c(pith_any(z.get(), 0, nullptr, false));
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(Values(c.get()), std::vector<double>{0}) << pith_dtype_name(dtype);
    }
}

TEST_F(ReduceStats, EmptyAllIsTrueAndEmptyAnyIsFalse)
{
    Tensor x = FromValues({0}, PITH_FLOAT32, {});
    Tensor a(pith_all(x.get(), 0, nullptr, false)), b(pith_any(x.get(), 0, nullptr, false));
    ASSERT_TRUE(a && b);
    EXPECT_EQ(Values(a.get()), std::vector<double>{1});
    EXPECT_EQ(Values(b.get()), std::vector<double>{0});
}

TEST_F(ReduceStats, LargeAllAndAnyFindOneOddElement)
{
    int64_t n = 2000000;
    Tensor ones(pith_ones(1, &n, PITH_INT32)), zeros(pith_zeros(1, &n, PITH_INT32));
    ASSERT_TRUE(ones && zeros);
    ((int32_t *)pith_data_ptr(ones.get()))[1999998] = 0;
    ((int32_t *)pith_data_ptr(zeros.get()))[1234567] = 5;
    Tensor a(pith_all(ones.get(), 0, nullptr, false)), b(pith_any(zeros.get(), 0, nullptr, false));
    ASSERT_TRUE(a && b);
    EXPECT_EQ(Values(a.get()), std::vector<double>{0});
    EXPECT_EQ(Values(b.get()), std::vector<double>{1});
}

TEST_F(ReduceStats, MetaVarAndAnyGiveShapeAndDtype)
{
    int64_t sizes[] = {2, 3};
    Tensor x(pith_empty_strided(2, sizes, nullptr, PITH_FLOAT16, PITH_META));
    int dim = 0;
    Tensor v(pith_std(x.get(), 1, &dim, 1, true));
    ASSERT_NE(v, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(v.get()), PITH_META);
    EXPECT_EQ(pith_tensor_dtype(v.get()), PITH_FLOAT16);
    EXPECT_EQ(Sizes(v.get()), (Shape{1, 3}));
    Tensor u(pith_empty_strided(2, sizes, nullptr, PITH_UINT8, PITH_META));
    Tensor a(pith_any(u.get(), 0, nullptr, false));
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(pith_tensor_dtype(a.get()), PITH_UINT8);
    EXPECT_EQ(pith_var(u.get(), 0, nullptr, 1, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "std and var only support floating point"));
}

} // namespace
} // namespace pith_d_test
