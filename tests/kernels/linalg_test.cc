// matmul (every rank combination), mm, bmm, addmm and linear against a naive double (or
// wrapping integer) reference, for every dtype and layout, plus empty operands, errors,
// large BLAS and own-loop products, and the Meta kernels.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reduce_test_util.h"

namespace pith_d_test {
namespace {

using Linalg = ReduceFixture;

struct Dense {
    Shape s;
    std::vector<double> v;
};

Dense Read(const pith_tensor *t)
{
    return {Sizes(t), Values(t)};
}

/* An integer result as the dtype stores it: the low bits of the exact value. */
double WrapTo(pith_dtype dtype, uint64_t v)
{
    switch (dtype) {
    case PITH_BOOL: return v != 0;
    case PITH_UINT8: return (uint8_t)v;
    case PITH_INT8: return (int8_t)v;
    case PITH_INT16: return (int16_t)v;
    case PITH_INT32: return (int32_t)v;
    default: return (double)(int64_t)v;
    }
}

/* The reference product by PyTorch's matmul rules. `scale[i]` gets sum |a||b| of element
 * i (the size of its rounding error). */
Dense RefMatmul(const Dense &a, const Dense &b, pith_dtype dtype, std::vector<double> *scale)
{
    Shape as = a.s, bs = b.s;
    bool a1 = as.size() == 1, b1 = bs.size() == 1;
    if (a1)
        as.insert(as.begin(), 1);
    if (b1)
        bs.push_back(1);
    int64_t n = as[as.size() - 2], k = as.back(), m = bs.back();
    Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
    size_t nb = std::max(ab.size(), bb.size());
    while (ab.size() < nb)
        ab.insert(ab.begin(), 1);
    while (bb.size() < nb)
        bb.insert(bb.begin(), 1);
    Shape batch(nb);
    for (size_t i = 0; i < nb; i++)
        batch[i] = std::max(ab[i], bb[i]);
    if (std::find(batch.begin(), batch.end(), 0) != batch.end() ||
        std::find(ab.begin(), ab.end(), 0) != ab.end() ||
        std::find(bb.begin(), bb.end(), 0) != bb.end())
        for (size_t i = 0; i < nb; i++)
            batch[i] = (ab[i] == 0 || bb[i] == 0) ? 0 : batch[i];
    Dense out;
    out.s = batch;
    if (!a1)
        out.s.push_back(n);
    if (!b1)
        out.s.push_back(m);
    int64_t nbatch = Numel(batch);
    std::vector<int64_t> idx(nb, 0);
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t aoff = 0, boff = 0;
        for (size_t d = 0; d < nb; d++) {
            aoff = aoff * ab[d] + (ab[d] == 1 ? 0 : idx[d]);
            boff = boff * bb[d] + (bb[d] == 1 ? 0 : idx[d]);
        }
        aoff *= n * k;
        boff *= k * m;
        for (int64_t i = 0; i < n; i++) {
            for (int64_t j = 0; j < m; j++) {
                double s = 0, mag = 0;
                uint64_t w = 0;
                for (int64_t q = 0; q < k; q++) {
                    double x = a.v[(size_t)(aoff + i * k + q)], y = b.v[(size_t)(boff + q * m + j)];
                    s += x * y;
                    mag += std::fabs(x * y);
                    w += (uint64_t)(int64_t)x * (uint64_t)(int64_t)y;
                }
                out.v.push_back(IsFloat(dtype) ? s : WrapTo(dtype, w));
                if (scale)
                    scale->push_back(mag);
            }
        }
        for (int d = (int)nb - 1; d >= 0; d--) {
            if (++idx[(size_t)d] < batch[(size_t)d])
                break;
            idx[(size_t)d] = 0;
        }
    }
    return out;
}

/* Tolerances of a float product: output rounding plus k roundings of a float (double for
 * float64) accumulator. */
std::vector<double> ProductTolerance(pith_dtype dtype, const std::vector<double> &want,
                                     const std::vector<double> &scale, int64_t k)
{
    std::vector<double> tol;
    double eps = dtype == PITH_FLOAT64 ? 2.3e-16 : 1.2e-7;
    for (size_t i = 0; i < want.size(); i++)
        tol.push_back(IsFloat(dtype) ? OutputPrecision(dtype) * std::fabs(want[i]) +
                                           (double)(k + 2) * eps * scale[i] + 1e-300
                                     : 0);
    return tol;
}

/* Operand shapes for ranks (ra, rb) with a common contraction size and broadcastable
 * batch dims (some of size 1). */
void RandomOperandShapes(std::mt19937 &rng, int ra, int rb, Shape *a, Shape *b)
{
    auto size = [&](int lo) { return (int64_t)(lo + rng() % 4u); };
    int64_t n = size(1), k = size(1), m = size(1);
    int nb = std::max(ra, rb) - 2;
    Shape batch;
    for (int i = 0; i < nb; i++)
        batch.push_back(size(1));
    a->clear();
    b->clear();
    for (int i = 0; i < ra - 2; i++) {
        int64_t s = batch[(size_t)(nb - (ra - 2) + i)];
        a->push_back(rng() % 3 == 0 ? 1 : s);
    }
    for (int i = 0; i < rb - 2; i++) {
        int64_t s = batch[(size_t)(nb - (rb - 2) + i)];
        b->push_back(rng() % 3 == 0 ? 1 : s);
    }
    if (ra >= 2)
        a->push_back(n);
    a->push_back(k);
    b->push_back(k);
    if (rb >= 2)
        b->push_back(m);
}

TEST_F(Linalg, MatmulMatchesReferenceForEveryRankCombinationDtypeAndLayout)
{
    std::mt19937 rng(81);
    for (pith_dtype dtype : kAllDtypes) {
        for (int ra = 1; ra <= 4; ra++) {
            for (int rb = 1; rb <= 4; rb++) {
                for (int iter = 0; iter < 3; iter++) {
                    Shape as, bs;
                    RandomOperandShapes(rng, ra, rb, &as, &bs);
                    Layout la = kLayouts[rng() % 4], lb = kLayouts[rng() % 4];
                    Tensor a = MakeTensor(rng, as, dtype, la), b = MakeTensor(rng, bs, dtype, lb);
                    Tensor r(pith_matmul(a.get(), b.get()));
                    ASSERT_NE(r, nullptr) << pith_last_error();
                    std::vector<double> scale;
                    Dense want = RefMatmul(Read(a.get()), Read(b.get()), dtype, &scale);
                    EXPECT_EQ(Sizes(r.get()), want.s) << ra << "x" << rb;
                    EXPECT_EQ(pith_tensor_dtype(r.get()), dtype);
                    EXPECT_TRUE(AllClose(r.get(), want.v,
                                         ProductTolerance(dtype, want.v, scale, as.back())))
                        << pith_dtype_name(dtype) << " ranks " << ra << "x" << rb << " layouts "
                        << (int)la << "," << (int)lb;
                }
            }
        }
    }
}

TEST_F(Linalg, DotOfTwoVectorsIsZeroDim)
{
    Tensor a = FromValues({3}, PITH_FLOAT64, {1, 2, 3}), b = FromValues({3}, PITH_FLOAT64, {4, 5, 6});
    Tensor r(pith_matmul(a.get(), b.get()));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(Sizes(r.get()), Shape{});
    EXPECT_EQ(Values(r.get()), std::vector<double>{32});
}

TEST_F(Linalg, TransposedOperandsGoThroughWithoutChangingTheResult)
{
    /* Row-major, transposed and both: every BLAS transpose combination. */
    std::mt19937 rng(83);
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64, PITH_INT32}) {
        Tensor a0 = MakeTensor(rng, {7, 5}, dtype, Layout::Contiguous);
        Tensor b0 = MakeTensor(rng, {6, 7}, dtype, Layout::Contiguous);
        Tensor at(pith_t(a0.get())), bt(pith_t(b0.get())); /* [5, 7] and [7, 6] */
        Tensor a1(pith_contiguous(at.get())), b1(pith_contiguous(bt.get()));
        for (int combo = 0; combo < 4; combo++) {
            const pith_tensor *a = combo & 1 ? at.get() : a1.get();
            const pith_tensor *b = combo & 2 ? bt.get() : b1.get();
            Tensor r(pith_mm(a, b));
            ASSERT_NE(r, nullptr) << pith_last_error();
            std::vector<double> scale;
            Dense want = RefMatmul(Read(a), Read(b), dtype, &scale);
            EXPECT_TRUE(AllClose(r.get(), want.v, ProductTolerance(dtype, want.v, scale, 7)))
                << pith_dtype_name(dtype) << " combo " << combo;
        }
    }
}

TEST_F(Linalg, IntegerProductsWrap)
{
    Tensor a = FromValues({1, 2}, PITH_INT8, {100, 100}), b = FromValues({2, 1}, PITH_INT8, {2, 1});
    Tensor r(pith_mm(a.get(), b.get()));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_INT8);
    EXPECT_EQ(Values(r.get()), std::vector<double>{(double)(int8_t)300});
    Tensor x = FromValues({2}, PITH_BOOL, {1, 1}), y = FromValues({2}, PITH_BOOL, {1, 1});
    Tensor d(pith_matmul(x.get(), y.get()));
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(pith_tensor_dtype(d.get()), PITH_BOOL);
    EXPECT_EQ(Values(d.get()), std::vector<double>{1});
}

/* ---- empty operands ---- */

TEST_F(Linalg, EmptyContractionGivesZeros)
{
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT16, PITH_INT64}) {
        Tensor a = FromValues({2, 0}, dtype, {}), b = FromValues({0, 3}, dtype, {});
        Tensor r(pith_matmul(a.get(), b.get()));
        ASSERT_NE(r, nullptr) << pith_last_error();
        EXPECT_EQ(Sizes(r.get()), (Shape{2, 3}));
        EXPECT_EQ(Values(r.get()), std::vector<double>(6, 0.0)) << pith_dtype_name(dtype);
    }
}

TEST_F(Linalg, EmptyRowsOrBatchGiveEmptyResults)
{
    Tensor a = FromValues({0, 4}, PITH_FLOAT32, {}), b = FromValues({4, 3}, PITH_FLOAT32,
                                                                    std::vector<double>(12, 1));
    Tensor r(pith_mm(a.get(), b.get()));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(Sizes(r.get()), (Shape{0, 3}));
    Tensor c = FromValues({0, 2, 4}, PITH_FLOAT64, {});
    Tensor d = FromValues({4}, PITH_FLOAT64, {1, 2, 3, 4});
    Tensor s(pith_matmul(c.get(), d.get()));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(Sizes(s.get()), (Shape{0, 2}));
}

/* ---- errors ---- */

TEST_F(Linalg, ZeroDimOperandIsAnError)
{
    Tensor s(pith_scalar_tensor(2, PITH_FLOAT32));
    Tensor m = FromValues({2, 2}, PITH_FLOAT32, {1, 2, 3, 4});
    EXPECT_EQ(pith_matmul(s.get(), m.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "both arguments to matmul need to be at least 1D, but "
                                         "they are 0D and 2D"));
}

TEST_F(Linalg, DtypeMismatchIsATypeError)
{
    Tensor a = FromValues({2, 2}, PITH_FLOAT32, {1, 2, 3, 4}), b = FromValues({2, 2}, PITH_FLOAT64,
                                                                             {1, 2, 3, 4});
    EXPECT_EQ(pith_matmul(a.get(), b.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "expected m1 and m2 to have the same dtype, but got: "
                                        "float32 != float64"));
    EXPECT_EQ(pith_mm(a.get(), b.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "mm: expected m1 and m2 to have the same dtype"));
}

TEST_F(Linalg, ContractionMismatchNamesBothShapes)
{
    Tensor a = FromValues({2, 3}, PITH_FLOAT32, std::vector<double>(6, 1));
    Tensor b = FromValues({4, 5}, PITH_FLOAT32, std::vector<double>(20, 1));
    EXPECT_EQ(pith_mm(a.get(), b.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"));
    EXPECT_EQ(pith_matmul(a.get(), b.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "matmul: mat1 and mat2 shapes cannot be multiplied"));
    Tensor v3 = FromValues({3}, PITH_FLOAT32, {1, 2, 3}), v4 = FromValues({4}, PITH_FLOAT32,
                                                                         {1, 2, 3, 4});
    EXPECT_EQ(pith_matmul(v3.get(), v4.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "inconsistent tensor size, expected tensor [3] and src "
                                         "[4] to have the same number of elements"));
    EXPECT_EQ(pith_matmul(a.get(), v4.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "size mismatch, got input (2), mat (2x3), vec (4)"));
}

TEST_F(Linalg, BatchDimsThatDoNotBroadcastAreAnError)
{
    Tensor a = FromValues({2, 1, 2}, PITH_FLOAT32, std::vector<double>(4, 1));
    Tensor b = FromValues({3, 2, 1}, PITH_FLOAT32, std::vector<double>(6, 1));
    EXPECT_EQ(pith_matmul(a.get(), b.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "The size of tensor a (2) must match the size of tensor "
                                         "b (3) at non-singleton dimension 0"));
}

TEST_F(Linalg, MmAndBmmCheckTheirRanks)
{
    Tensor v = FromValues({2}, PITH_FLOAT32, {1, 2});
    Tensor m = FromValues({2, 2}, PITH_FLOAT32, {1, 2, 3, 4});
    EXPECT_EQ(pith_mm(v.get(), m.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "mm: self must be a matrix"));
    EXPECT_EQ(pith_mm(m.get(), v.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "mm: mat2 must be a matrix"));
    EXPECT_EQ(pith_bmm(m.get(), m.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "batch1 must be a 3D tensor"));
}

TEST_F(Linalg, BmmChecksBatchesAndContraction)
{
    Tensor a = FromValues({2, 2, 3}, PITH_FLOAT32, std::vector<double>(12, 1));
    Tensor b = FromValues({3, 3, 2}, PITH_FLOAT32, std::vector<double>(18, 1));
    Tensor c = FromValues({2, 4, 2}, PITH_FLOAT32, std::vector<double>(16, 1));
    EXPECT_EQ(pith_bmm(a.get(), b.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "batch1 and batch2 must have same number of batches, "
                                         "got 2 and 3"));
    EXPECT_EQ(pith_bmm(a.get(), c.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Expected size for first two dimensions of batch2 "
                                         "tensor to be: [2, 3] but got: [2, 4]."));
    EXPECT_EQ(pith_bmm(a.get(), a.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "but got: [2, 2]"));
}

TEST_F(Linalg, BmmMatchesReference)
{
    std::mt19937 rng(87);
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_BFLOAT16, PITH_INT16}) {
        Tensor a = MakeTensor(rng, {3, 4, 5}, dtype, Layout::Permuted);
        Tensor b = MakeTensor(rng, {3, 5, 2}, dtype, Layout::Stepped);
        Tensor r(pith_bmm(a.get(), b.get()));
        ASSERT_NE(r, nullptr) << pith_last_error();
        std::vector<double> scale;
        Dense want = RefMatmul(Read(a.get()), Read(b.get()), dtype, &scale);
        EXPECT_EQ(Sizes(r.get()), (Shape{3, 4, 2}));
        EXPECT_TRUE(AllClose(r.get(), want.v, ProductTolerance(dtype, want.v, scale, 5)));
    }
}

/* ---- addmm ---- */

TEST_F(Linalg, AddmmScalesAndBroadcastsSelf)
{
    std::mt19937 rng(89);
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64, PITH_FLOAT16, PITH_INT32}) {
        for (const Shape &self_shape : {Shape{3, 4}, Shape{4}, Shape{1, 4}, Shape{3, 1}, Shape{}}) {
            Tensor self = MakeTensor(rng, self_shape, dtype, Layout::Contiguous);
            Tensor a = MakeTensor(rng, {3, 5}, dtype, Layout::Permuted);
            Tensor b = MakeTensor(rng, {5, 4}, dtype, Layout::Contiguous);
            double beta = IsFloat(dtype) ? 0.5 : 3, alpha = IsFloat(dtype) ? -1.5 : 2;
            Tensor r(pith_addmm(self.get(), a.get(), b.get(), beta, alpha));
            ASSERT_NE(r, nullptr) << pith_last_error();
            EXPECT_EQ(Sizes(r.get()), (Shape{3, 4}));
            std::vector<double> scale;
            Dense ab = RefMatmul(Read(a.get()), Read(b.get()), PITH_FLOAT64, &scale);
            std::vector<double> sv = Values(self.get()), want;
            for (int64_t i = 0; i < 3; i++) {
                for (int64_t j = 0; j < 4; j++) {
                    size_t si = self_shape.empty()     ? 0
                                : self_shape.size() == 1 ? (size_t)j
                                : self_shape[0] == 1   ? (size_t)j
                                : self_shape[1] == 1   ? (size_t)i
                                                       : (size_t)(i * 4 + j);
                    want.push_back(beta * sv[si] + alpha * ab.v[(size_t)(i * 4 + j)]);
                    scale[(size_t)(i * 4 + j)] = std::fabs(alpha) * scale[(size_t)(i * 4 + j)] +
                                                 std::fabs(beta * sv[si]);
                }
            }
            EXPECT_TRUE(AllClose(r.get(), want, ProductTolerance(dtype, want, scale, 6)))
                << pith_dtype_name(dtype) << " self " << self_shape.size() << "-D";
        }
    }
}

TEST_F(Linalg, AddmmWithBetaZeroIgnoresNanInSelf)
{
    Tensor self = FromValues({2, 2}, PITH_FLOAT32, {NAN, NAN, NAN, NAN});
    Tensor a = FromValues({2, 2}, PITH_FLOAT32, {1, 2, 3, 4});
    Tensor r(pith_addmm(self.get(), a.get(), a.get(), 0, 1));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(Values(r.get()), (std::vector<double>{7, 10, 15, 22}));
    Tensor h = FromValues({2, 2}, PITH_FLOAT16, {NAN, NAN, NAN, NAN});
    Tensor ah = FromValues({2, 2}, PITH_FLOAT16, {1, 2, 3, 4});
    Tensor rh(pith_addmm(h.get(), ah.get(), ah.get(), 0, 1));
    ASSERT_NE(rh, nullptr);
    EXPECT_EQ(Values(rh.get()), (std::vector<double>{7, 10, 15, 22}));
}

TEST_F(Linalg, AddmmErrors)
{
    Tensor m = FromValues({2, 2}, PITH_INT32, {1, 2, 3, 4});
    Tensor v = FromValues({2}, PITH_INT32, {1, 2});
    EXPECT_EQ(pith_addmm(m.get(), m.get(), m.get(), 1, 0.5), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "argument alpha must not be a floating point number"));
    EXPECT_EQ(pith_addmm(m.get(), v.get(), m.get(), 1, 1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "mat1 must be a matrix"));
    Tensor f = FromValues({2, 2}, PITH_FLOAT32, {1, 2, 3, 4});
    EXPECT_EQ(pith_addmm(f.get(), m.get(), m.get(), 1, 1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "expected self and mat1 to have the same dtype"));
    Tensor bad = FromValues({3}, PITH_INT32, {1, 2, 3});
    EXPECT_EQ(pith_addmm(bad.get(), m.get(), m.get(), 1, 1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "The expanded size of the tensor (2) must match the "
                                         "existing size (3) at non-singleton dimension 1"));
}

/* ---- linear ---- */

TEST_F(Linalg, LinearMatchesReferenceForAnyLeadingDims)
{
    std::mt19937 rng(91);
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64, PITH_BFLOAT16, PITH_INT64}) {
        for (const Shape &in_shape : {Shape{6}, Shape{3, 6}, Shape{2, 4, 6}, Shape{2, 1, 3, 6}}) {
            for (int with_bias = 0; with_bias < 2; with_bias++) {
                Layout layout = kLayouts[rng() % 4];
                Tensor x = MakeTensor(rng, in_shape, dtype, layout);
                Tensor w = MakeTensor(rng, {5, 6}, dtype, Layout::Contiguous);
                Tensor b = MakeTensor(rng, {5}, dtype, Layout::Contiguous);
                Tensor r(pith_linear(x.get(), w.get(), with_bias ? b.get() : nullptr));
                ASSERT_NE(r, nullptr) << pith_last_error();
                Tensor wt(pith_t(w.get()));
                std::vector<double> scale;
                Dense want = RefMatmul(Read(x.get()), Read(wt.get()), dtype, &scale);
                Shape out_shape = in_shape;
                out_shape.back() = 5;
                EXPECT_EQ(Sizes(r.get()), out_shape);
                if (with_bias) {
                    std::vector<double> bv = Values(b.get());
                    for (size_t i = 0; i < want.v.size(); i++) {
                        double add = bv[i % 5];
                        want.v[i] = IsFloat(dtype) ? want.v[i] + add
                                                   : WrapTo(dtype, (uint64_t)(int64_t)want.v[i] +
                                                                       (uint64_t)(int64_t)add);
                        scale[i] += std::fabs(add);
                    }
                }
                EXPECT_TRUE(AllClose(r.get(), want.v, ProductTolerance(dtype, want.v, scale, 6)))
                    << pith_dtype_name(dtype) << " input " << in_shape.size() << "-D bias "
                    << with_bias << " layout " << (int)layout;
            }
        }
    }
}

TEST_F(Linalg, LinearWithAVectorWeightDropsTheLastDim)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT64, {1, 2, 3, 4, 5, 6});
    Tensor w = FromValues({3}, PITH_FLOAT64, {1, 0, -1});
    Tensor b(pith_scalar_tensor(10, PITH_FLOAT64));
    Tensor r(pith_linear(x.get(), w.get(), b.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), Shape{2});
    EXPECT_EQ(Values(r.get()), (std::vector<double>{8, 8}));
}

TEST_F(Linalg, LinearErrors)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, std::vector<double>(6, 1));
    Tensor w = FromValues({5, 4}, PITH_FLOAT32, std::vector<double>(20, 1));
    EXPECT_EQ(pith_linear(x.get(), w.get(), nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"));
    Tensor w3 = FromValues({1, 5, 3}, PITH_FLOAT32, std::vector<double>(15, 1));
    EXPECT_EQ(pith_linear(x.get(), w3.get(), nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "weight must be 1-D or 2-D"));
    Tensor w2 = FromValues({5, 3}, PITH_FLOAT32, std::vector<double>(15, 1));
    Tensor bd = FromValues({5}, PITH_FLOAT64, std::vector<double>(5, 1));
    EXPECT_EQ(pith_linear(x.get(), w2.get(), bd.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "expected input and bias to have the same dtype"));
    Tensor b4 = FromValues({4}, PITH_FLOAT32, std::vector<double>(4, 1));
    EXPECT_EQ(pith_linear(x.get(), w2.get(), b4.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "The expanded size of the tensor (5) must match the "
                                         "existing size (4)"));
    EXPECT_EQ(pith_linear(x.get(), nullptr, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
}

/* ---- large products: BLAS and the parallel own loop ---- */

TEST_F(Linalg, LargeProductsMatchReference)
{
    std::mt19937 rng(93);
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64, PITH_INT32, PITH_FLOAT16}) {
        Tensor a = MakeTensor(rng, {97, 130}, dtype, Layout::Contiguous);
        Tensor b = MakeTensor(rng, {130, 301}, dtype, Layout::Permuted);
        Tensor r(pith_matmul(a.get(), b.get()));
        ASSERT_NE(r, nullptr) << pith_last_error();
        std::vector<double> scale;
        Dense want = RefMatmul(Read(a.get()), Read(b.get()), dtype, &scale);
        EXPECT_TRUE(AllClose(r.get(), want.v, ProductTolerance(dtype, want.v, scale, 130)))
            << pith_dtype_name(dtype);
    }
}

TEST_F(Linalg, BatchedProductWithASharedMatrixMatchesReference)
{
    /* [batch, rows, k] @ [k, m]: one stacked BLAS call when the batch is contiguous. */
    std::mt19937 rng(95);
    for (Layout layout : {Layout::Contiguous, Layout::Stepped, Layout::Broadcast}) {
        Tensor a = MakeTensor(rng, {6, 7, 9}, PITH_FLOAT32, layout);
        Tensor b = MakeTensor(rng, {9, 4}, PITH_FLOAT32, Layout::Contiguous);
        Tensor r(pith_matmul(a.get(), b.get()));
        ASSERT_NE(r, nullptr);
        std::vector<double> scale;
        Dense want = RefMatmul(Read(a.get()), Read(b.get()), PITH_FLOAT32, &scale);
        EXPECT_TRUE(AllClose(r.get(), want.v, ProductTolerance(PITH_FLOAT32, want.v, scale, 9)))
            << "layout " << (int)layout;
    }
}

TEST_F(Linalg, LargeMatmulInAForkedChildFinishes)
{
    /* The parent's BLAS and OpenMP threads do not exist in the child: there the product
     * must run on one thread (see Note [BLAS threads]) rather than hang in libgomp. */
    int64_t sizes[] = {256, 256};
    Tensor a(pith_ones(2, sizes, PITH_FLOAT32));
    Tensor warm(pith_matmul(a.get(), a.get())); /* starts the parent's thread pools */
    ASSERT_NE(warm, nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        pith_tensor *r = pith_matmul(a.get(), a.get());
        double v = 0;
        bool ok = r && pith_item_at(r, 12345, &v) == PITH_OK && v == 256;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 300 && done == 0; i++) { /* up to 30 s */
        done = waitpid(pid, &status, WNOHANG);
        if (done == 0)
            usleep(100000);
    }
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        FAIL() << "matmul in a forked child did not finish";
    }
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

/* ---- vector shapes: GEMV and dot (Note [Vector products]) ---- */

/* Products with one row, one column or both, every operand in every layout, float32 and
 * float64, against the reference. */
TEST_F(Linalg, VectorShapesMatchReferenceForEveryLayout)
{
    std::mt19937 rng(97);
    const int64_t n = 19, k = 37, m = 23;
    const std::vector<std::pair<Shape, Shape>> shapes = {
        {{1, k}, {k, m}}, {{n, k}, {k, 1}}, {{1, k}, {k, 1}}, {{k}, {k, m}},
        {{n, k}, {k}},    {{k}, {k}},       {{1, k}, {k}},    {{k}, {k, 1}},
        {{1, 1}, {1, m}}, {{n, 1}, {1, 1}}};
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64}) {
        for (const auto &[as, bs] : shapes) {
            for (Layout la : kLayouts) {
                for (Layout lb : kLayouts) {
                    Tensor a = MakeTensor(rng, as, dtype, la);
                    Tensor b = MakeTensor(rng, bs, dtype, lb);
                    Tensor r(pith_matmul(a.get(), b.get()));
                    ASSERT_NE(r, nullptr) << pith_last_error();
                    std::vector<double> scale;
                    Dense want = RefMatmul(Read(a.get()), Read(b.get()), dtype, &scale);
                    EXPECT_EQ(Sizes(r.get()), want.s);
                    EXPECT_TRUE(AllClose(r.get(), want.v,
                                         ProductTolerance(dtype, want.v, scale, as.back())))
                        << pith_dtype_name(dtype) << " " << as.size() << "-D x " << bs.size()
                        << "-D, layouts " << (int)la << "," << (int)lb;
                }
            }
        }
    }
}

/* linear at batch 1 (the weight viewed transposed: a NoTrans GEMV), with and without
 * bias, for a weight that is contiguous, transposed or has strided rows. */
TEST_F(Linalg, LinearAtBatchOneMatchesReferenceForEveryWeightLayout)
{
    std::mt19937 rng(99);
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64}) {
        for (const Shape &in_shape : {Shape{1, 40}, Shape{40}, Shape{1, 1, 40}}) {
            for (Layout lw : kLayouts) {
                for (int with_bias = 0; with_bias < 2; with_bias++) {
                    Tensor x = MakeTensor(rng, in_shape, dtype, Layout::Stepped);
                    Tensor w = MakeTensor(rng, {33, 40}, dtype, lw);
                    Tensor bias = MakeTensor(rng, {33}, dtype, Layout::Stepped);
                    Tensor r(pith_linear(x.get(), w.get(), with_bias ? bias.get() : nullptr));
                    ASSERT_NE(r, nullptr) << pith_last_error();
                    Tensor wt(pith_t(w.get()));
                    std::vector<double> scale;
                    Dense want = RefMatmul(Read(x.get()), Read(wt.get()), dtype, &scale);
                    if (with_bias) {
                        std::vector<double> bv = Values(bias.get());
                        for (size_t i = 0; i < want.v.size(); i++) {
                            want.v[i] += bv[i % 33];
                            scale[i] += std::fabs(bv[i % 33]);
                        }
                    }
                    EXPECT_TRUE(AllClose(r.get(), want.v,
                                         ProductTolerance(dtype, want.v, scale, 40)))
                        << pith_dtype_name(dtype) << " input " << in_shape.size()
                        << "-D, weight layout " << (int)lw << ", bias " << with_bias;
                }
            }
        }
    }
}

/* addmm's beta * self + alpha * (mat1 @ mat2) on the GEMV and dot shapes. */
TEST_F(Linalg, AddmmScalesOnVectorShapes)
{
    std::mt19937 rng(101);
    const std::vector<std::tuple<Shape, Shape, Shape>> cases = {
        {{1, 9}, {9, 6}, {6}},    {{1, 9}, {9, 6}, {1, 6}}, {{5, 9}, {9, 1}, {5, 1}},
        {{5, 9}, {9, 1}, {}},     {{1, 9}, {9, 1}, {1, 1}}, {{1, 9}, {9, 1}, {}}};
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64}) {
        for (const auto &[as, bs, ss] : cases) {
            for (Layout lb : {Layout::Contiguous, Layout::Permuted, Layout::Stepped}) {
                Tensor a = MakeTensor(rng, as, dtype, Layout::Stepped);
                Tensor b = MakeTensor(rng, bs, dtype, lb);
                Tensor self = MakeTensor(rng, ss, dtype, Layout::Contiguous);
                const double beta = 0.5, alpha = -1.5;
                Tensor r(pith_addmm(self.get(), a.get(), b.get(), beta, alpha));
                ASSERT_NE(r, nullptr) << pith_last_error();
                std::vector<double> scale;
                Dense ab = RefMatmul(Read(a.get()), Read(b.get()), PITH_FLOAT64, &scale);
                std::vector<double> sv = Values(self.get()), want;
                int64_t rows = as[0], cols = bs[1];
                for (int64_t i = 0; i < rows; i++) {
                    for (int64_t j = 0; j < cols; j++) {
                        size_t at = (size_t)(i * cols + j);
                        size_t si = ss.empty() ? 0 : ss.size() == 1 ? (size_t)j
                                                 : ss[0] == 1       ? (size_t)j
                                                                    : (size_t)i;
                        want.push_back(beta * sv[si] + alpha * ab.v[at]);
                        scale[at] = std::fabs(alpha) * scale[at] + std::fabs(beta * sv[si]);
                    }
                }
                EXPECT_TRUE(AllClose(r.get(), want, ProductTolerance(dtype, want, scale, 9)))
                    << pith_dtype_name(dtype) << " " << rows << "x" << cols << " self "
                    << ss.size() << "-D, layout " << (int)lb;
            }
        }
    }
}

TEST_F(Linalg, BetaZeroIgnoresNanOnVectorShapes)
{
    for (const auto &[as, bs] : std::vector<std::pair<Shape, Shape>>{
             {{1, 3}, {3, 2}}, {{2, 3}, {3, 1}}, {{1, 3}, {3, 1}}}) {
        int64_t outs = as[0] * bs[1];
        Tensor self = FromValues({as[0], bs[1]}, PITH_FLOAT32,
                                 std::vector<double>((size_t)outs, NAN));
        Tensor a = FromValues(as, PITH_FLOAT32, std::vector<double>((size_t)Numel(as), 1));
        Tensor b = FromValues(bs, PITH_FLOAT32, std::vector<double>((size_t)Numel(bs), 2));
        Tensor r(pith_addmm(self.get(), a.get(), b.get(), 0, 1));
        ASSERT_NE(r, nullptr) << pith_last_error();
        EXPECT_EQ(Values(r.get()), std::vector<double>((size_t)outs, 6))
            << as[0] << "x" << bs[1];
        /* An out= full of nan is written, never read (the product goes straight in). */
        Tensor out = FromValues({as[0], bs[1]}, PITH_FLOAT32,
                                std::vector<double>((size_t)outs, NAN));
        ASSERT_EQ(pith_mm_out(out.get(), a.get(), b.get()), PITH_OK) << pith_last_error();
        EXPECT_EQ(Values(out.get()), std::vector<double>((size_t)outs, 6))
            << "out= " << as[0] << "x" << bs[1];
    }
}

/* Batched products with one row or one column: separate batches (B has its own), stacked
 * ones (B shared), and separate batches that run in parallel, with their results bit for
 * bit the same with 1 thread and with 2. */
TEST_F(Linalg, BatchedVectorShapesMatchReferenceAtAnyThreadCount)
{
    std::mt19937 rng(103);
    int saved = pith_get_num_threads();
    const std::vector<std::pair<Shape, Shape>> shapes = {
        {{6, 1, 13}, {6, 13, 7}}, {{6, 5, 13}, {6, 13, 1}}, {{6, 1, 13}, {6, 13, 1}},
        {{6, 1, 13}, {13, 7}},    {{2, 3, 5, 13}, {13}},    {{3, 1, 13}, {1, 13, 7}},
        /* At least two BLAS_ONE_THREAD_GEMM multiply-adds of small products: in parallel. */
        {{64, 32, 32}, {64, 32, 32}}, {{128, 1, 90}, {128, 90, 90}},
        {{128, 90, 1}, {128, 1, 90}}, {{4096, 1, 128}, {4096, 128, 1}}};
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64}) {
        for (const auto &[as, bs] : shapes) {
            for (Layout la : kLayouts) {
                for (Layout lb : {Layout::Contiguous, Layout::Permuted, Layout::Broadcast}) {
                    Tensor a = MakeTensor(rng, as, dtype, la);
                    Tensor b = MakeTensor(rng, bs, dtype, lb);
                    pith_set_num_threads(1);
                    Tensor r1(pith_matmul(a.get(), b.get()));
                    pith_set_num_threads(2);
                    Tensor r2(pith_matmul(a.get(), b.get()));
                    ASSERT_NE(r1, nullptr) << pith_last_error();
                    ASSERT_NE(r2, nullptr) << pith_last_error();
                    std::vector<double> scale;
                    Dense want = RefMatmul(Read(a.get()), Read(b.get()), dtype, &scale);
                    EXPECT_EQ(Sizes(r1.get()), want.s);
                    EXPECT_TRUE(AllClose(r1.get(), want.v,
                                         ProductTolerance(dtype, want.v, scale, as.back())))
                        << pith_dtype_name(dtype) << " " << as.size() << "-D x " << bs.size()
                        << "-D, layouts " << (int)la << "," << (int)lb;
                    /* Separate products, each on one thread, give the same bits at any
                     * thread count; a stacked one (B expanded) is one BLAS call, whose
                     * threads may split a sum differently. */
                    if (lb != Layout::Broadcast && bs.size() == as.size()) {
                        EXPECT_EQ(Values(r1.get()), Values(r2.get()))
                            << "1 and 2 threads differ: " << pith_dtype_name(dtype) << " "
                            << as.size() << "-D x " << bs.size() << "-D, layouts " << (int)la
                            << "," << (int)lb;
                    }
                }
            }
        }
    }
    pith_set_num_threads(saved);
}

/* ---- Meta ---- */

TEST_F(Linalg, MetaKernelsGiveShapesAndCheckLikeCpu)
{
    int64_t as[] = {2, 1, 4, 3}, bs[] = {5, 3, 6};
    Tensor a(pith_empty_strided(4, as, nullptr, PITH_FLOAT32, PITH_META));
    Tensor b(pith_empty_strided(3, bs, nullptr, PITH_FLOAT32, PITH_META));
    Tensor r(pith_matmul(a.get(), b.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(r.get()), PITH_META);
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 5, 4, 6}));
    EXPECT_EQ(pith_matmul(b.get(), b.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "shapes cannot be multiplied"));
    int64_t ws[] = {7, 3};
    Tensor w(pith_empty_strided(2, ws, nullptr, PITH_FLOAT32, PITH_META));
    Tensor l(pith_linear(a.get(), w.get(), nullptr));
    ASSERT_NE(l, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(l.get()), (Shape{2, 1, 4, 7}));
}

} // namespace
} // namespace pith_d_test
