// amax, amin, max(), min(), max.dim, min.dim, argmax and argmin: values and first-extreme
// indices against double references for every dtype and layout, nan propagation, empty
// inputs, errors, large parallel inputs and the Meta kernels.
#include "reduce_test_util.h"

namespace pith_d_test {
namespace {

using ReduceMinMax = ReduceFixture;

/* The first extreme of a group (nan counts as the extreme), as (value, index). */
std::pair<double, int64_t> RefExtreme(const std::vector<double> &g, bool max)
{
    size_t best = 0;
    for (size_t i = 1; i < g.size(); i++) {
        if (std::isnan(g[best]))
            break;
        if (std::isnan(g[i]) || (max ? g[i] > g[best] : g[i] < g[best]))
            best = i;
    }
    return {g[best], (int64_t)best};
}

/* Values on a coarse grid, so that ties are common. */
Tensor MakeTied(std::mt19937 &rng, const Shape &sizes, pith_dtype dtype, Layout layout)
{
    return MakeTensor(rng, sizes, dtype, layout, -2, 2, 0.5);
}

/* A nonempty random shape for the ops that reject empty reductions. */
Shape NonEmptyShape(std::mt19937 &rng)
{
    return RandomShape(rng, 4, 5, false);
}

TEST_F(ReduceMinMax, AmaxAminMatchReferenceForEveryDtypeAndLayout)
{
    std::mt19937 rng(21);
    for (pith_dtype dtype : kAllDtypes) {
        for (Layout layout : kLayouts) {
            for (int iter = 0; iter < 30; iter++) {
                Shape sizes = NonEmptyShape(rng);
                Tensor x = MakeTensor(rng, sizes, dtype, layout);
                DimsCase c = RandomDims(rng, (int)sizes.size());
                bool keepdim = rng() & 1;
                auto groups = Groups(sizes, Values(x.get()), c.mask);
                for (bool max : {true, false}) {
                    Tensor r(max ? pith_amax(x.get(), (int)c.dims.size(), c.dims.data(), keepdim)
                                 : pith_amin(x.get(), (int)c.dims.size(), c.dims.data(), keepdim));
                    ASSERT_NE(r, nullptr) << pith_last_error();
                    EXPECT_EQ(pith_tensor_dtype(r.get()), dtype);
                    EXPECT_EQ(Sizes(r.get()), ReducedShape(sizes, c.mask, keepdim));
                    std::vector<double> want, tol(groups.size(), 0);
                    for (auto &g : groups)
                        want.push_back(RefExtreme(g, max).first);
                    EXPECT_TRUE(AllClose(r.get(), want, tol))
                        << pith_dtype_name(dtype) << (max ? " amax" : " amin");
                }
            }
        }
    }
}

TEST_F(ReduceMinMax, FullMaxAndMinAreZeroDim)
{
    Tensor x = FromValues({2, 3}, PITH_INT16, {4, -7, 9, 9, 0, -7});
    for (const char *op : {"max", "min"}) {
        Tensor r = CallBoxed(op, [&](pith_stack *s) { pith_stack_push_tensor(s, x.get()); });
        ASSERT_NE(r, nullptr) << pith_last_error();
        EXPECT_EQ(Sizes(r.get()), Shape{});
        EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_INT16);
        EXPECT_EQ(Values(r.get()), std::vector<double>{op[1] == 'a' ? 9.0 : -7.0});
    }
}

TEST_F(ReduceMinMax, TypedMaxAndMinAgreeWithTheBoxedOps)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, {4, -7.5, 9, 9, 0, -7.5});
    Tensor mx(pith_max(x.get())), mn(pith_min(x.get()));
    ASSERT_NE(mx, nullptr) << pith_last_error();
    ASSERT_NE(mn, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(mx.get()), Shape{});
    EXPECT_EQ(Values(mx.get()), std::vector<double>{9.0});
    EXPECT_EQ(Values(mn.get()), std::vector<double>{-7.5});
    EXPECT_EQ(pith_max(nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
}

void CheckMaxMinDim(pith_dtype dtype, unsigned seed)
{
    std::mt19937 rng(seed);
    for (Layout layout : kLayouts) {
        for (int iter = 0; iter < 25; iter++) {
            Shape sizes = NonEmptyShape(rng);
            int nd = (int)sizes.size();
            Tensor x = MakeTied(rng, sizes, dtype, layout);
            int dim = nd ? (int)(rng() % (unsigned)nd) : 0;
            int arg = (nd && (rng() & 1)) ? dim - nd : dim;
            bool keepdim = rng() & 1;
            auto groups = Groups(sizes, Values(x.get()), nd ? 1u << dim : 0);
            for (bool max : {true, false}) {
                pith_tensor *v = nullptr, *i = nullptr;
                pith_status st = max ? pith_max_dim(x.get(), arg, keepdim, &v, &i)
                                     : pith_min_dim(x.get(), arg, keepdim, &v, &i);
                ASSERT_EQ(st, PITH_OK) << pith_last_error();
                Tensor values(v), indices(i);
                Shape want_shape = ReducedShape(sizes, nd ? 1u << dim : 0, keepdim);
                EXPECT_EQ(Sizes(values.get()), want_shape);
                EXPECT_EQ(Sizes(indices.get()), want_shape);
                EXPECT_EQ(pith_tensor_dtype(values.get()), dtype);
                EXPECT_EQ(pith_tensor_dtype(indices.get()), PITH_INT64);
                std::vector<double> wv, wi, tol(groups.size(), 0);
                for (auto &g : groups) {
                    auto e = RefExtreme(g, max);
                    wv.push_back(e.first);
                    wi.push_back((double)e.second);
                }
                EXPECT_TRUE(AllClose(values.get(), wv, tol)) << pith_dtype_name(dtype);
                EXPECT_TRUE(AllClose(indices.get(), wi, tol)) << pith_dtype_name(dtype);
            }
        }
    }
}

TEST_F(ReduceMinMax, MaxDimAndMinDimGiveTheFirstExtremeForEveryDtype)
{
    for (pith_dtype d : kAllDtypes)
        CheckMaxMinDim(d, 400 + d);
}

TEST_F(ReduceMinMax, ArgmaxArgminMatchReferenceWithAndWithoutDim)
{
    std::mt19937 rng(31);
    for (pith_dtype dtype : kAllDtypes) {
        if (dtype == PITH_BOOL)
            continue;
        for (Layout layout : kLayouts) {
            for (int iter = 0; iter < 25; iter++) {
                Shape sizes = NonEmptyShape(rng);
                int nd = (int)sizes.size();
                Tensor x = MakeTied(rng, sizes, dtype, layout);
                bool flat = nd == 0 || (rng() % 3 == 0);
                int dim = nd ? (int)(rng() % (unsigned)nd) : 0;
                bool keepdim = rng() & 1;
                uint32_t mask = flat ? (nd ? (1u << nd) - 1 : 0) : 1u << dim;
                auto groups = Groups(sizes, Values(x.get()), mask);
                for (bool max : {true, false}) {
                    const int *d = flat ? nullptr : &dim;
                    Tensor r(max ? pith_argmax(x.get(), d, keepdim) : pith_argmin(x.get(), d, keepdim));
                    ASSERT_NE(r, nullptr) << pith_last_error();
                    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_INT64);
                    EXPECT_EQ(Sizes(r.get()), ReducedShape(sizes, mask, keepdim));
                    std::vector<double> want, tol(groups.size(), 0);
                    for (auto &g : groups)
                        want.push_back((double)RefExtreme(g, max).second);
                    EXPECT_TRUE(AllClose(r.get(), want, tol))
                        << pith_dtype_name(dtype) << " layout " << (int)layout << " flat " << flat;
                }
            }
        }
    }
}

TEST_F(ReduceMinMax, ArgmaxWithoutDimIndexesTheRowMajorFlattening)
{
    /* The transpose of [[0, 5], [9, 1]] is [[0, 9], [5, 1]]: its max is at flat index 1. */
    Tensor x = FromValues({2, 2}, PITH_FLOAT32, {0, 5, 9, 1});
    int perm[] = {1, 0};
    Tensor t(pith_permute(x.get(), 2, perm));
    Tensor r(pith_argmax(t.get(), nullptr, false));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(Values(r.get()), std::vector<double>{1});
    Tensor k(pith_argmax(t.get(), nullptr, true));
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(Sizes(k.get()), (Shape{1, 1}));
}

/* ---- nan ---- */

TEST_F(ReduceMinMax, AmaxAndAminPropagateNan)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, {1, NAN, 3, 4, 5, 6});
    int dim = 1;
    Tensor a(pith_amax(x.get(), 1, &dim, false)), b(pith_amin(x.get(), 1, &dim, false));
    ASSERT_TRUE(a && b);
    auto va = Values(a.get()), vb = Values(b.get());
    EXPECT_TRUE(std::isnan(va[0]));
    EXPECT_EQ(va[1], 6);
    EXPECT_TRUE(std::isnan(vb[0]));
    EXPECT_EQ(vb[1], 4);
}

TEST_F(ReduceMinMax, FirstNanIsTheExtremeOfMaxDimAndArgmin)
{
    for (pith_dtype dtype : kFloatDtypes) {
        Tensor x = FromValues({5}, dtype, {1, NAN, 7, NAN, -3});
        pith_tensor *v = nullptr, *i = nullptr;
        ASSERT_EQ(pith_max_dim(x.get(), 0, false, &v, &i), PITH_OK);
        Tensor values(v), indices(i);
        EXPECT_TRUE(std::isnan(Values(values.get())[0]));
        EXPECT_EQ(Values(indices.get()), std::vector<double>{1});
        Tensor r(pith_argmin(x.get(), nullptr, false));
        ASSERT_NE(r, nullptr);
        EXPECT_EQ(Values(r.get()), std::vector<double>{1}) << pith_dtype_name(dtype);
    }
}

/* ---- empty inputs and errors ---- */

TEST_F(ReduceMinMax, AmaxOverAnEmptyDimIsAnIndexError)
{
    Tensor x = FromValues({3, 0}, PITH_FLOAT32, {});
    int dim = 1;
    EXPECT_EQ(pith_amax(x.get(), 1, &dim, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "amax(): Expected reduction dim 1 to have non-zero size."));
    dim = 0; /* reducing the non-empty dim is fine: the result is empty */
    Tensor r(pith_amin(x.get(), 1, &dim, false));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), Shape{0});
}

TEST_F(ReduceMinMax, FullReductionOfEmptyWithoutIdentityIsAnError)
{
    Tensor x = FromValues({0}, PITH_INT32, {});
    EXPECT_EQ(pith_amax(x.get(), 0, nullptr, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "amax(): Expected reduction dim to be specified for "
                                         "input.numel() == 0."));
    Tensor m = CallBoxed("max", [&](pith_stack *s) { pith_stack_push_tensor(s, x.get()); });
    EXPECT_EQ(m, nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "max(): Expected reduction dim to be specified for "
                                         "input.numel() == 0."));
    EXPECT_EQ(pith_argmin(x.get(), nullptr, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "argmin(): Expected reduction dim to be specified"));
}

TEST_F(ReduceMinMax, MaxDimOverAnEmptyDimIsAnIndexError)
{
    Tensor x = FromValues({0, 2}, PITH_FLOAT64, {});
    pith_tensor *v = (pith_tensor *)1, *i = (pith_tensor *)1;
    EXPECT_EQ(pith_max_dim(x.get(), 0, false, &v, &i), PITH_ERR_INDEX);
    EXPECT_EQ(v, nullptr);
    EXPECT_EQ(i, nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "max(): Expected reduction dim 0 to have non-zero size."));
    int dim = 0;
    EXPECT_EQ(pith_argmax(x.get(), &dim, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "argmax(): Expected reduction dim 0"));
}

TEST_F(ReduceMinMax, ArgmaxOfBoolIsATypeError)
{
    Tensor x = FromValues({2}, PITH_BOOL, {0, 1});
    EXPECT_EQ(pith_argmax(x.get(), nullptr, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "not implemented for 'Bool'"));
}

TEST_F(ReduceMinMax, MaxDimWithDimOutOfRangeIsAnIndexError)
{
    Tensor x = FromValues({2, 2}, PITH_FLOAT32, {1, 2, 3, 4});
    pith_tensor *v, *i;
    EXPECT_EQ(pith_min_dim(x.get(), 2, false, &v, &i), PITH_ERR_INDEX);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "Dimension out of range"));
    EXPECT_EQ(pith_max_dim(x.get(), 0, false, nullptr, &i), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "must not be NULL"));
}

TEST_F(ReduceMinMax, ZeroDimMaxDimGivesIndexZero)
{
    Tensor x(pith_scalar_tensor(-4, PITH_INT32));
    pith_tensor *v, *i;
    ASSERT_EQ(pith_max_dim(x.get(), -1, true, &v, &i), PITH_OK) << pith_last_error();
    Tensor values(v), indices(i);
    EXPECT_EQ(Sizes(values.get()), Shape{});
    EXPECT_EQ(Values(values.get()), std::vector<double>{-4});
    EXPECT_EQ(Values(indices.get()), std::vector<double>{0});
}

/* ---- large inputs ---- */

TEST_F(ReduceMinMax, LargeArgmaxFindsTheFirstOfTwoEqualMaxima)
{
    /* Above the grain size the full reduction runs in chunks: ties across chunks must
     * still give the first index. */
    int64_t n = 1000003;
    std::vector<float> f((size_t)n);
    for (int64_t i = 0; i < n; i++)
        f[(size_t)i] = (float)(i % 1000) * 0.001f;
    f[700001] = 5;
    f[900001] = 5;
    Tensor x(pith_from_data(f.data(), 1, &n, PITH_FLOAT32));
    Tensor r(pith_argmax(x.get(), nullptr, false));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(Values(r.get()), std::vector<double>{700001});
    Tensor m(pith_amax(x.get(), 0, nullptr, false));
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(Values(m.get()), std::vector<double>{5});
}

TEST_F(ReduceMinMax, LargeMaxDimMatchesReferenceAlongEachDim)
{
    std::mt19937 rng(41);
    Shape sizes = {700, 97};
    for (Layout layout : {Layout::Contiguous, Layout::Permuted}) {
        Tensor x = MakeTied(rng, sizes, PITH_FLOAT32, layout);
        auto vals = Values(x.get());
        for (int dim = 0; dim < 2; dim++) {
            pith_tensor *v, *i;
            ASSERT_EQ(pith_min_dim(x.get(), dim, false, &v, &i), PITH_OK);
            Tensor values(v), indices(i);
            std::vector<double> wv, wi;
            for (auto &g : Groups(sizes, vals, 1u << dim)) {
                auto e = RefExtreme(g, false);
                wv.push_back(e.first);
                wi.push_back((double)e.second);
            }
            std::vector<double> tol(wv.size(), 0);
            EXPECT_TRUE(AllClose(values.get(), wv, tol)) << "dim " << dim;
            EXPECT_TRUE(AllClose(indices.get(), wi, tol)) << "dim " << dim;
        }
    }
}

/* ---- Meta ---- */

TEST_F(ReduceMinMax, MetaMaxDimGivesTwoMetaTensors)
{
    int64_t sizes[] = {3, 4};
    Tensor x(pith_empty_strided(2, sizes, nullptr, PITH_BFLOAT16, PITH_META));
    ASSERT_NE(x, nullptr);
    pith_tensor *v, *i;
    ASSERT_EQ(pith_max_dim(x.get(), 1, true, &v, &i), PITH_OK) << pith_last_error();
    Tensor values(v), indices(i);
    EXPECT_EQ(pith_tensor_device(values.get()), PITH_META);
    EXPECT_EQ(pith_tensor_device(indices.get()), PITH_META);
    EXPECT_EQ(pith_tensor_dtype(values.get()), PITH_BFLOAT16);
    EXPECT_EQ(pith_tensor_dtype(indices.get()), PITH_INT64);
    EXPECT_EQ(Sizes(indices.get()), (Shape{3, 1}));
    Tensor a(pith_argmin(x.get(), nullptr, false));
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(Sizes(a.get()), Shape{});
    int64_t empty_sizes[] = {3, 0};
    Tensor e(pith_empty_strided(2, empty_sizes, nullptr, PITH_FLOAT32, PITH_META));
    int dim = 1;
    EXPECT_EQ(pith_amax(e.get(), 1, &dim, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "Expected reduction dim 1 to have non-zero size"));
}

} // namespace
} // namespace pith_d_test
