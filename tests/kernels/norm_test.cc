// softmax, log_softmax and layer_norm against double references for every floating dtype
// and layout, numerical stability, nan and -inf, the dtype= argument, errors, large inputs
// and the Meta kernels.
#include "reduce_test_util.h"

namespace pith_d_test {
namespace {

using Norm = ReduceFixture;

/* Vectors along `dim` (row-major over the other dims), each with its element positions. */
std::vector<std::vector<size_t>> Lines(const Shape &sizes, int dim)
{
    int nd = (int)sizes.size();
    uint32_t mask = nd ? 1u << dim : 0;
    std::vector<double> pos((size_t)Numel(sizes));
    for (size_t i = 0; i < pos.size(); i++)
        pos[i] = (double)i;
    std::vector<std::vector<size_t>> lines;
    for (auto &g : Groups(sizes, pos, mask)) {
        lines.emplace_back();
        for (double p : g)
            lines.back().push_back((size_t)p);
    }
    return lines;
}

/* softmax (or log_softmax) of `v` along `dim`, in double; `mag` gets each element's
 * scale for the tolerance. */
std::vector<double> RefSoftmax(const Shape &sizes, const std::vector<double> &v, int dim,
                               bool log, std::vector<double> *mag)
{
    std::vector<double> out(v.size()), m(v.size());
    for (auto &line : Lines(sizes, dim)) {
        double max = -INFINITY, sum = 0;
        for (size_t i : line)
            max = std::max(max, v[i]);
        for (size_t i : line)
            sum += std::exp(v[i] - max);
        for (size_t i : line) {
            out[i] = log ? v[i] - max - std::log(sum) : std::exp(v[i] - max) / sum;
            m[i] = log ? std::fabs(v[i]) + std::fabs(max) + 1 : out[i];
        }
    }
    *mag = m;
    return out;
}

TEST_F(Norm, SoftmaxAndLogSoftmaxMatchReference)
{
    std::mt19937 rng(101);
    for (pith_dtype dtype : kFloatDtypes) {
        for (Layout layout : kLayouts) {
            for (int iter = 0; iter < 25; iter++) {
                Shape sizes = RandomShape(rng, 4, 5, true);
                int nd = (int)sizes.size();
                Tensor x = MakeTensor(rng, sizes, dtype, layout, -4, 4);
                int dim = nd ? (int)(rng() % (unsigned)nd) : 0;
                int arg = (rng() & 1) ? dim - (nd ? nd : 1) : dim;
                std::vector<double> v = Values(x.get());
                for (bool log : {false, true}) {
                    Tensor r(log ? pith_log_softmax(x.get(), arg) : pith_softmax(x.get(), arg));
                    ASSERT_NE(r, nullptr) << pith_last_error();
                    EXPECT_EQ(pith_tensor_dtype(r.get()), dtype);
                    EXPECT_EQ(Sizes(r.get()), sizes);
                    std::vector<double> mag, tol;
                    std::vector<double> want = RefSoftmax(sizes, v, dim, log, &mag);
                    for (double m : mag)
                        tol.push_back(4 * OutputPrecision(dtype) * m + 1e-7 * (dtype != PITH_FLOAT64));
                    EXPECT_TRUE(AllClose(r.get(), want, tol))
                        << pith_dtype_name(dtype) << (log ? " log_softmax" : " softmax")
                        << " layout " << (int)layout << " dim " << arg;
                }
            }
        }
    }
}

TEST_F(Norm, SoftmaxIsStableForLargeInputs)
{
    Tensor x = FromValues({3}, PITH_FLOAT32, {1000, 1001, 1002});
    Tensor s(pith_softmax(x.get(), 0)), l(pith_log_softmax(x.get(), 0));
    ASSERT_TRUE(s && l);
    double e1 = std::exp(-1.0), e2 = std::exp(-2.0), z = 1 + e1 + e2;
    std::vector<double> want = {e2 / z, e1 / z, 1 / z}, tol(3, 1e-6);
    EXPECT_TRUE(AllClose(s.get(), want, tol));
    std::vector<double> lwant = {-2 - std::log(z), -1 - std::log(z), -std::log(z)};
    EXPECT_TRUE(AllClose(l.get(), lwant, tol));
}

TEST_F(Norm, NanMakesItsWholeVectorNan)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT64, {1, NAN, 2, 1, 2, 3});
    Tensor s(pith_softmax(x.get(), 1));
    ASSERT_NE(s, nullptr);
    auto v = Values(s.get());
    for (int i = 0; i < 3; i++)
        EXPECT_TRUE(std::isnan(v[(size_t)i]));
    for (int i = 3; i < 6; i++)
        EXPECT_FALSE(std::isnan(v[(size_t)i]));
}

TEST_F(Norm, AllMinusInfinityIsNanAndOneMinusInfinityIsZero)
{
    Tensor x = FromValues({2, 2}, PITH_FLOAT32, {-INFINITY, -INFINITY, -INFINITY, 0});
    Tensor s(pith_softmax(x.get(), 1));
    ASSERT_NE(s, nullptr);
    auto v = Values(s.get());
    EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
    EXPECT_EQ(v[2], 0);
    EXPECT_EQ(v[3], 1);
}

TEST_F(Norm, SoftmaxOfZeroDimIsOne)
{
    Tensor x(pith_scalar_tensor(3, PITH_FLOAT32));
    Tensor s(pith_softmax(x.get(), -1)), l(pith_log_softmax(x.get(), 0));
    ASSERT_TRUE(s && l);
    EXPECT_EQ(Sizes(s.get()), Shape{});
    EXPECT_EQ(Values(s.get()), std::vector<double>{1});
    EXPECT_EQ(Values(l.get()), std::vector<double>{0});
}

TEST_F(Norm, SoftmaxOfIntegersNeedsAFloatingDtype)
{
    Tensor x = FromValues({3}, PITH_INT64, {1, 2, 3});
    EXPECT_EQ(pith_softmax(x.get(), 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "softmax: not implemented for 'Long'"));
    auto with_dtype = [&](const char *op, pith_dtype dtype) {
        return CallBoxed(op, [&](pith_stack *s) {
            pith_stack_push_tensor(s, x.get());
            pith_stack_push_int(s, 0);
            pith_stack_push_dtype(s, dtype);
        });
    };
    Tensor r = with_dtype("softmax.int", PITH_FLOAT64);
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_FLOAT64);
    double z = std::exp(-2.0) + std::exp(-1.0) + 1;
    std::vector<double> tol(3, 1e-15);
    EXPECT_TRUE(AllClose(r.get(), {std::exp(-2.0) / z, std::exp(-1.0) / z, 1 / z}, tol));
    EXPECT_EQ(with_dtype("log_softmax.int", PITH_INT32), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "log_softmax: not implemented for 'Int'"));
}

TEST_F(Norm, SoftmaxDtypeArgumentConvertsFloatInputs)
{
    Tensor x = FromValues({2}, PITH_FLOAT16, {0, 1});
    Tensor r = CallBoxed("log_softmax.int", [&](pith_stack *s) {
        pith_stack_push_tensor(s, x.get());
        pith_stack_push_int(s, -1);
        pith_stack_push_dtype(s, PITH_FLOAT64);
    });
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_FLOAT64);
    double lz = std::log(1 + std::exp(1.0));
    std::vector<double> tol(2, 1e-15);
    EXPECT_TRUE(AllClose(r.get(), {-lz, 1 - lz}, tol));
}

TEST_F(Norm, SoftmaxDimOutOfRangeIsAnIndexError)
{
    Tensor x = FromValues({2, 2}, PITH_FLOAT32, {1, 2, 3, 4});
    EXPECT_EQ(pith_softmax(x.get(), 2), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "softmax: Dimension out of range"));
}

TEST_F(Norm, LargeSoftmaxAlongEachDimMatchesReference)
{
    std::mt19937 rng(103);
    Shape sizes = {300, 211};
    Tensor x = MakeTensor(rng, sizes, PITH_FLOAT32, Layout::Contiguous, -5, 5);
    std::vector<double> v = Values(x.get());
    for (int dim = 0; dim < 2; dim++) {
        Tensor r(pith_softmax(x.get(), dim));
        ASSERT_NE(r, nullptr);
        std::vector<double> mag, tol;
        std::vector<double> want = RefSoftmax(sizes, v, dim, false, &mag);
        for (double m : mag)
            tol.push_back(1e-6 * m + 1e-9);
        EXPECT_TRUE(AllClose(r.get(), want, tol)) << "dim " << dim;
    }
}

/* ---- layer_norm ---- */

/* y = (x - mean) / sqrt(var + eps) * w + b over the trailing `norm` dims, in double. */
std::vector<double> RefLayerNorm(const std::vector<double> &x, int64_t len,
                                 const std::vector<double> *w, const std::vector<double> *b,
                                 double eps)
{
    std::vector<double> out(x.size());
    for (size_t r = 0; r * (size_t)len < x.size(); r++) {
        double mean = 0, var = 0;
        for (int64_t j = 0; j < len; j++)
            mean += x[r * (size_t)len + (size_t)j];
        mean /= (double)len;
        for (int64_t j = 0; j < len; j++) {
            double d = x[r * (size_t)len + (size_t)j] - mean;
            var += d * d;
        }
        var /= (double)len;
        for (int64_t j = 0; j < len; j++) {
            size_t i = r * (size_t)len + (size_t)j;
            double y = (x[i] - mean) / std::sqrt(var + eps);
            if (w)
                y *= (*w)[(size_t)j];
            if (b)
                y += (*b)[(size_t)j];
            out[i] = y;
        }
    }
    return out;
}

TEST_F(Norm, LayerNormMatchesReference)
{
    std::mt19937 rng(107);
    for (pith_dtype dtype : kFloatDtypes) {
        for (Layout layout : kLayouts) {
            for (int iter = 0; iter < 12; iter++) {
                Shape sizes = RandomShape(rng, 4, 5, true);
                if (sizes.empty())
                    sizes.push_back(3);
                int nnorm = 1 + (int)(rng() % sizes.size());
                Shape norm(sizes.end() - nnorm, sizes.end());
                Tensor x = MakeTensor(rng, sizes, dtype, layout, -1, 3);
                Tensor w = MakeTensor(rng, norm, dtype, Layout::Contiguous, 0.5, 2);
                Tensor b = MakeTensor(rng, norm, dtype, Layout::Permuted);
                bool use_w = rng() & 1, use_b = rng() & 1;
                double eps = (rng() & 1) ? 1e-5 : 0.1;
                Tensor r(pith_layer_norm(x.get(), nnorm, norm.data(), use_w ? w.get() : nullptr,
                                         use_b ? b.get() : nullptr, eps));
                ASSERT_NE(r, nullptr) << pith_last_error();
                EXPECT_EQ(Sizes(r.get()), sizes);
                EXPECT_EQ(pith_tensor_dtype(r.get()), dtype);
                std::vector<double> wv = Values(w.get()), bv = Values(b.get());
                std::vector<double> want = RefLayerNorm(Values(x.get()), Numel(norm),
                                                        use_w ? &wv : nullptr,
                                                        use_b ? &bv : nullptr, eps);
                std::vector<double> tol;
                for (double y : want)
                    tol.push_back(10 * OutputPrecision(dtype) * (std::fabs(y) + 4));
                EXPECT_TRUE(AllClose(r.get(), want, tol))
                    << pith_dtype_name(dtype) << " layout " << (int)layout << " norm dims "
                    << nnorm << " w " << use_w << " b " << use_b;
            }
        }
    }
}

TEST_F(Norm, LayerNormOfAConstantRowIsTheBias)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, {5, 5, 5, 1, 2, 3});
    Tensor b = FromValues({3}, PITH_FLOAT32, {7, 8, 9});
    int64_t norm = 3;
    Tensor r(pith_layer_norm(x.get(), 1, &norm, nullptr, b.get(), 1e-5));
    ASSERT_NE(r, nullptr);
    auto v = Values(r.get());
    EXPECT_EQ(v[0], 7);
    EXPECT_EQ(v[1], 8);
    EXPECT_EQ(v[2], 9);
}

TEST_F(Norm, LayerNormChecksTheTrailingShape)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, std::vector<double>(6, 1));
    int64_t four = 4;
    EXPECT_EQ(pith_layer_norm(x.get(), 1, &four, nullptr, nullptr, 1e-5), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Given normalized_shape=[4], expected input with shape "
                                         "[*, 4], but got input of size[2, 3]"));
    int64_t three_dims[] = {1, 2, 3};
    EXPECT_EQ(pith_layer_norm(x.get(), 3, three_dims, nullptr, nullptr, 1e-5), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Given normalized_shape=[1, 2, 3], expected input with "
                                         "shape [*, 1, 2, 3]"));
    EXPECT_EQ(pith_layer_norm(x.get(), 0, nullptr, nullptr, nullptr, 1e-5), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Expected normalized_shape to be at least 1-dimensional"));
}

TEST_F(Norm, LayerNormChecksWeightAndBias)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, std::vector<double>(6, 1));
    Tensor w4 = FromValues({4}, PITH_FLOAT32, std::vector<double>(4, 1));
    Tensor b64 = FromValues({3}, PITH_FLOAT64, std::vector<double>(3, 1));
    int64_t three = 3;
    EXPECT_EQ(pith_layer_norm(x.get(), 1, &three, w4.get(), nullptr, 1e-5), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Expected weight to be of same shape as normalized_shape, "
                                         "but got weight of shape [4] and normalized_shape = [3]"));
    EXPECT_EQ(pith_layer_norm(x.get(), 1, &three, nullptr, w4.get(), 1e-5), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Expected bias to be of same shape"));
    EXPECT_EQ(pith_layer_norm(x.get(), 1, &three, nullptr, b64.get(), 1e-5), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "expected bias to have dtype float32"));
}

TEST_F(Norm, LayerNormOfIntegersIsATypeError)
{
    Tensor x = FromValues({2, 3}, PITH_INT32, std::vector<double>(6, 1));
    int64_t three = 3;
    EXPECT_EQ(pith_layer_norm(x.get(), 1, &three, nullptr, nullptr, 1e-5), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "layer_norm: not implemented for 'Int'"));
}

TEST_F(Norm, LayerNormOfEmptyInputIsEmpty)
{
    Tensor x = FromValues({0, 3}, PITH_FLOAT32, {});
    int64_t three = 3;
    Tensor r(pith_layer_norm(x.get(), 1, &three, nullptr, nullptr, 1e-5));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{0, 3}));
}

TEST_F(Norm, LargeLayerNormMatchesReference)
{
    std::mt19937 rng(109);
    Shape sizes = {400, 129};
    Tensor x = MakeTensor(rng, sizes, PITH_FLOAT32, Layout::Permuted, 100, 104);
    int64_t len = 129;
    Tensor r(pith_layer_norm(x.get(), 1, &len, nullptr, nullptr, 1e-5));
    ASSERT_NE(r, nullptr);
    std::vector<double> want = RefLayerNorm(Values(x.get()), len, nullptr, nullptr, 1e-5), tol;
    for (double y : want)
        tol.push_back(1e-4 * (std::fabs(y) + 1));
    EXPECT_TRUE(AllClose(r.get(), want, tol));
}

TEST_F(Norm, MetaKernelsGiveShapeAndCheckLikeCpu)
{
    int64_t sizes[] = {2, 5};
    Tensor x(pith_empty_strided(2, sizes, nullptr, PITH_BFLOAT16, PITH_META));
    Tensor s(pith_log_softmax(x.get(), 1));
    ASSERT_NE(s, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(s.get()), PITH_META);
    EXPECT_EQ(Sizes(s.get()), (Shape{2, 5}));
    int64_t five = 5, four = 4;
    Tensor l(pith_layer_norm(x.get(), 1, &five, nullptr, nullptr, 1e-5));
    ASSERT_NE(l, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(l.get()), PITH_META);
    EXPECT_EQ(pith_layer_norm(x.get(), 1, &four, nullptr, nullptr, 1e-5), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "expected input with shape [*, 4]"));
    Tensor i(pith_empty_strided(2, sizes, nullptr, PITH_INT8, PITH_META));
    EXPECT_EQ(pith_softmax(i.get(), 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "not implemented for 'Char'"));
}

} // namespace
} // namespace pith_d_test
