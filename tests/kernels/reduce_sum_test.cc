// sum, mean and prod: values against double references for every dtype and layout, result
// dtypes against PyTorch's table, the dtype= argument, dims handling, empty and 0-dim
// inputs, wrapping, accuracy and determinism of large sums, and the Meta kernels.
#include <cinttypes>
#include <map>

#include "common/oracle_table.h"
#include "reduce_test_util.h"

namespace pith_d_test {
namespace {

using ReduceSum = ReduceFixture;

/* Reference of sum (wrap: integer results wrap mod 2^64) over each group. */
double RefSum(const std::vector<double> &g, bool integral)
{
    if (integral) {
        uint64_t s = 0;
        for (double x : g)
            s += (uint64_t)(int64_t)x;
        return (double)(int64_t)s;
    }
    double s = 0;
    for (double x : g)
        s += x;
    return s;
}

double RefProd(const std::vector<double> &g, bool integral)
{
    if (integral) {
        uint64_t p = 1;
        for (double x : g)
            p *= (uint64_t)(int64_t)x;
        return (double)(int64_t)p;
    }
    double p = 1;
    for (double x : g)
        p *= x;
    return p;
}

enum class Op { Sum, Mean, Prod };

pith_tensor *CallOp(Op op, const pith_tensor *x, const DimsCase &c, bool keepdim)
{
    int n = (int)c.dims.size();
    switch (op) {
    case Op::Sum: return pith_sum(x, n, c.dims.data(), keepdim);
    case Op::Mean: return pith_mean(x, n, c.dims.data(), keepdim);
    case Op::Prod: return pith_prod(x, n, c.dims.data(), keepdim);
    }
    return nullptr;
}

/* Runs `op` on random shapes, dims and layouts of `dtype` and compares with the reference. */
void CheckAgainstReference(Op op, pith_dtype dtype, unsigned seed)
{
    std::mt19937 rng(seed);
    bool integral = !IsFloat(dtype);
    pith_dtype out_dtype = integral ? PITH_INT64 : dtype;
    double lo = op == Op::Prod ? 0.8 : -2, hi = op == Op::Prod ? 1.25 : 2;
    for (Layout layout : kLayouts) {
        for (int iter = 0; iter < 40; iter++) {
            Shape sizes = RandomShape(rng, 4, 5, true);
            Tensor x = MakeTensor(rng, sizes, dtype, layout, lo, hi);
            ASSERT_NE(x, nullptr);
            DimsCase c = RandomDims(rng, (int)sizes.size());
            bool keepdim = rng() & 1;
            Tensor r(CallOp(op, x.get(), c, keepdim));
            ASSERT_NE(r, nullptr) << pith_last_error();
            EXPECT_EQ(pith_tensor_dtype(r.get()), out_dtype);
            EXPECT_EQ(Sizes(r.get()), ReducedShape(sizes, c.mask, keepdim));
            auto groups = Groups(sizes, Values(x.get()), c.mask);
            std::vector<double> want, tol;
            for (auto &g : groups) {
                double v = op == Op::Prod ? RefProd(g, integral) : RefSum(g, integral);
                if (op == Op::Mean)
                    v = g.empty() ? NAN : v / (double)g.size();
                want.push_back(v);
                tol.push_back(integral ? 0
                                       : OutputPrecision(out_dtype) * std::fabs(v) +
                                             SumErrorBound(dtype) * AbsSum(g) + 1e-300);
            }
            EXPECT_TRUE(AllClose(r.get(), want, tol))
                << "dtype " << pith_dtype_name(dtype) << " layout " << (int)layout << " iter "
                << iter;
        }
    }
}

TEST_F(ReduceSum, SumMatchesReferenceForEveryDtypeAndLayout)
{
    for (pith_dtype d : kAllDtypes)
        CheckAgainstReference(Op::Sum, d, 100 + d);
}

TEST_F(ReduceSum, MeanMatchesReferenceForFloatingDtypes)
{
    for (pith_dtype d : kFloatDtypes)
        CheckAgainstReference(Op::Mean, d, 200 + d);
}

TEST_F(ReduceSum, ProdMatchesReferenceForEveryDtypeAndLayout)
{
    for (pith_dtype d : kAllDtypes)
        CheckAgainstReference(Op::Prod, d, 300 + d);
}

/* ---- result dtypes: PyTorch's table ---- */

std::map<std::string, pith_dtype> DtypeByName()
{
    std::map<std::string, pith_dtype> m;
    for (pith_dtype d : kAllDtypes)
        m[pith_dtype_name(d)] = d;
    return m;
}

/* Rows of op_result_dtypes.csv: input dtype name -> column -> result (or "error"). */
std::map<std::string, std::map<std::string, std::string>> ReadResultTable()
{
    std::map<std::string, std::map<std::string, std::string>> table;
    pith_test::OracleTable csv = pith_test::ReadOracleTable("op_result_dtypes.csv");
    for (const auto &cells : csv.rows)
        for (size_t i = 1; i < cells.size(); i++)
            table[cells[0]][csv.header[i]] = cells[i];
    return table;
}

TEST_F(ReduceSum, ResultDtypesMatchPyTorchTable)
{
    auto table = ReadResultTable();
    auto names = DtypeByName();
    ASSERT_EQ(table.size(), 10u);
    for (auto &row : table) {
        pith_dtype in = names.at(row.first);
        Shape sizes = {2, 3};
        Tensor x = FromValues(sizes, in, {1, 0, 1, 1, 0, 1});
        for (const char *col : {"sum", "mean", "prod", "argmax"}) {
            const std::string &want = row.second.at(col);
            Tensor r;
            std::string c = col;
            if (c == "sum")
                r.reset(pith_sum(x.get(), 0, nullptr, false));
            else if (c == "mean")
                r.reset(pith_mean(x.get(), 0, nullptr, false));
            else if (c == "prod")
                r.reset(pith_prod(x.get(), 0, nullptr, false));
            else
                r.reset(pith_argmax(x.get(), nullptr, false));
            if (want == "error") {
                EXPECT_EQ(r, nullptr) << col << " of " << row.first;
                EXPECT_EQ(pith_last_status(), PITH_ERR_TYPE) << col << " of " << row.first;
                pith_clear_error();
            } else {
                ASSERT_NE(r, nullptr) << col << " of " << row.first << ": " << pith_last_error();
                EXPECT_STREQ(pith_dtype_name(pith_tensor_dtype(r.get())), want.c_str())
                    << col << " of " << row.first;
            }
        }
    }
}

TEST_F(ReduceSum, MeanOfIntegersAsksForAFloatingDtype)
{
    Tensor x = FromValues({3}, PITH_INT64, {1, 2, 3});
    EXPECT_EQ(pith_mean(x.get(), 0, nullptr, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "mean(): could not infer output dtype. Input dtype must "
                                        "be either a floating point or complex dtype. Got: Long"));
    Tensor b = FromValues({3}, PITH_BOOL, {1, 0, 1});
    EXPECT_EQ(pith_mean(b.get(), 0, nullptr, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "Got: Bool"));
}

/* ---- the dtype= argument (boxed: the public wrappers do not take it) ---- */

Tensor CallWithDtype(const char *op, const pith_tensor *x, pith_dtype dtype)
{
    return CallBoxed(op, [&](pith_stack *s) {
        pith_stack_push_tensor(s, x);
        pith_stack_push_none(s);
        pith_stack_push_bool(s, false);
        pith_stack_push_dtype(s, dtype);
    });
}

TEST_F(ReduceSum, MeanWithIntegerDtypeArgumentIsAnError)
{
    Tensor x = FromValues({3}, PITH_FLOAT32, {1, 2, 3});
    EXPECT_EQ(CallWithDtype("mean.dim", x.get(), PITH_INT64), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "Optional dtype must be either a floating point or "
                                        "complex dtype. Got: Long"));
}

TEST_F(ReduceSum, MeanOfIntegersWithFloatingDtypeConvertsFirst)
{
    Tensor x = FromValues({4}, PITH_INT32, {1, 2, 3, 5});
    Tensor r = CallWithDtype("mean.dim", x.get(), PITH_FLOAT64);
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_FLOAT64);
    EXPECT_EQ(Values(r.get()), std::vector<double>{2.75});
}

TEST_F(ReduceSum, SumDtypeArgumentConvertsBeforeSumming)
{
    /* float -> int32 truncates each element first: 1.7 + 2.6 + -0.5 = 1 + 2 + 0. */
    Tensor x = FromValues({3}, PITH_FLOAT32, {1.7, 2.6, -0.5});
    Tensor r = CallWithDtype("sum.dim_IntList", x.get(), PITH_INT32);
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_INT32);
    EXPECT_EQ(Values(r.get()), std::vector<double>{3});
}

TEST_F(ReduceSum, SumWithItsOwnIntegerDtypeKeepsIt)
{
    /* An explicit dtype wins over the int64 default, and the sum wraps in it. */
    Tensor x = FromValues({2}, PITH_INT8, {100, 100});
    Tensor r = CallWithDtype("sum.dim_IntList", x.get(), PITH_INT8);
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_INT8);
    EXPECT_EQ(Values(r.get()), std::vector<double>{-56});
}

TEST_F(ReduceSum, SumWithBoolDtypeIsAnyNonZero)
{
    Tensor x = FromValues({2, 2}, PITH_INT32, {0, 0, 3, 0});
    Tensor r = CallBoxed("sum.dim_IntList", [&](pith_stack *s) {
        int64_t dim = 1;
        pith_stack_push_tensor(s, x.get());
        pith_stack_push_int_list(s, &dim, 1);
        pith_stack_push_bool(s, false);
        pith_stack_push_dtype(s, PITH_BOOL);
    });
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_BOOL);
    EXPECT_EQ(Values(r.get()), (std::vector<double>{0, 1}));
}

TEST_F(ReduceSum, ProdDtypeArgumentSetsTheResultDtype)
{
    Tensor x = FromValues({3}, PITH_INT16, {2, 3, 4});
    Tensor r = CallWithDtype("prod.dim_IntList", x.get(), PITH_FLOAT64);
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_FLOAT64);
    EXPECT_EQ(Values(r.get()), std::vector<double>{24});
}

/* ---- dims ---- */

TEST_F(ReduceSum, RepeatedDimIsAnError)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, {1, 2, 3, 4, 5, 6});
    int dims[] = {0, -2};
    EXPECT_EQ(pith_sum(x.get(), 2, dims, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "dim 0 appears multiple times in the list of dims"));
}

TEST_F(ReduceSum, DimOutOfRangeIsAnIndexError)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, {1, 2, 3, 4, 5, 6});
    int dim = 2;
    EXPECT_EQ(pith_sum(x.get(), 1, &dim, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "expected to be in range of [-2, 1], but got 2"));
    dim = -3;
    EXPECT_EQ(pith_mean(x.get(), 1, &dim, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "but got -3"));
}

TEST_F(ReduceSum, NegativeDimsWrap)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, {1, 2, 3, 4, 5, 6});
    int dim = -1;
    Tensor r(pith_sum(x.get(), 1, &dim, true));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 1}));
    EXPECT_EQ(Values(r.get()), (std::vector<double>{6, 15}));
}

TEST_F(ReduceSum, EveryDimListedIsTheSameAsNone)
{
    Tensor x = FromValues({2, 3}, PITH_INT32, {1, 2, 3, 4, 5, 6});
    int dims[] = {1, 0};
    Tensor a(pith_sum(x.get(), 2, dims, true));
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(Sizes(a.get()), (Shape{1, 1}));
    EXPECT_EQ(Values(a.get()), std::vector<double>{21});
}

TEST_F(ReduceSum, LongDimListsReachTheKernel)
{
    /* More dims than PITH_MAX_DIMS must repeat one: the kernel's error, not a crash. */
    Tensor x = FromValues({2}, PITH_FLOAT32, {1, 2});
    std::vector<int> dims(40, 0);
    EXPECT_EQ(pith_sum(x.get(), 40, dims.data(), false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "appears multiple times"));
}

TEST_F(ReduceSum, BadPublicArgumentsAreErrors)
{
    Tensor x = FromValues({2}, PITH_FLOAT32, {1, 2});
    EXPECT_EQ(pith_sum(nullptr, 0, nullptr, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
    EXPECT_EQ(pith_sum(x.get(), 1, nullptr, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "dims is NULL"));
    EXPECT_EQ(pith_sum(x.get(), -1, nullptr, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "ndims must be non-negative"));
}

/* ---- empty and 0-dim ---- */

TEST_F(ReduceSum, EmptyReductionsGiveTheIdentity)
{
    Tensor x = FromValues({0, 3}, PITH_FLOAT32, {});
    int dim = 0;
    Tensor s(pith_sum(x.get(), 1, &dim, false)), p(pith_prod(x.get(), 1, &dim, false)),
        m(pith_mean(x.get(), 1, &dim, false));
    ASSERT_TRUE(s && p && m) << pith_last_error();
    EXPECT_EQ(Values(s.get()), (std::vector<double>{0, 0, 0}));
    EXPECT_EQ(Values(p.get()), (std::vector<double>{1, 1, 1}));
    for (double v : Values(m.get()))
        EXPECT_TRUE(std::isnan(v));
}

TEST_F(ReduceSum, ReducingANonEmptyDimOfAnEmptyTensorIsEmpty)
{
    Tensor x = FromValues({0, 3}, PITH_INT32, {});
    int dim = 1;
    Tensor s(pith_sum(x.get(), 1, &dim, true));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(Sizes(s.get()), (Shape{0, 1}));
    EXPECT_EQ(pith_tensor_dtype(s.get()), PITH_INT64);
}

TEST_F(ReduceSum, FullSumOfEmptyIsZeroDim)
{
    Tensor x = FromValues({2, 0}, PITH_INT64, {});
    Tensor s(pith_sum(x.get(), 0, nullptr, false));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(Sizes(s.get()), Shape{});
    EXPECT_EQ(Values(s.get()), std::vector<double>{0});
}

TEST_F(ReduceSum, ZeroDimTensorReducesOverDimZeroOrMinusOne)
{
    Tensor x(pith_scalar_tensor(2.5, PITH_FLOAT64));
    for (int dim : {0, -1}) {
        for (bool keepdim : {false, true}) {
            Tensor r(pith_sum(x.get(), 1, &dim, keepdim));
            ASSERT_NE(r, nullptr) << pith_last_error();
            EXPECT_EQ(Sizes(r.get()), Shape{});
            EXPECT_EQ(Values(r.get()), std::vector<double>{2.5});
        }
    }
    int bad = 1;
    EXPECT_EQ(pith_sum(x.get(), 1, &bad, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "expected to be in range of [-1, 0], but got 1"));
    int both[] = {0, -1};
    EXPECT_EQ(pith_sum(x.get(), 2, both, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "dim 0 appears multiple times"));
}

/* ---- integer wrapping ---- */

TEST_F(ReduceSum, Int64SumWraps)
{
    int64_t data[] = {INT64_MAX, 1};
    int64_t n = 2;
    Tensor x(pith_from_data(data, 1, &n, PITH_INT64));
    Tensor r(pith_sum(x.get(), 0, nullptr, false));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(*(const int64_t *)pith_data_ptr(r.get()), INT64_MIN);
}

TEST_F(ReduceSum, Int64ProdWraps)
{
    int64_t data[] = {(int64_t)1 << 62, 4, 3};
    int64_t n = 3;
    Tensor x(pith_from_data(data, 1, &n, PITH_INT64));
    Tensor r(pith_prod(x.get(), 0, nullptr, false));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(*(const int64_t *)pith_data_ptr(r.get()), 0);
    int64_t data2[] = {INT64_MAX, 3};
    n = 2;
    Tensor y(pith_from_data(data2, 1, &n, PITH_INT64));
    Tensor r2(pith_prod(y.get(), 0, nullptr, false));
    ASSERT_NE(r2, nullptr);
    EXPECT_EQ(*(const int64_t *)pith_data_ptr(r2.get()), (int64_t)((uint64_t)INT64_MAX * 3u));
}

TEST_F(ReduceSum, SmallIntegerSumsDoNotWrapInInt64)
{
    Tensor x = FromValues({3}, PITH_INT8, {127, 127, 127});
    Tensor r(pith_sum(x.get(), 0, nullptr, false));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(Values(r.get()), std::vector<double>{381});
}

/* ---- large inputs: accuracy, the parallel paths, determinism ---- */

TEST_F(ReduceSum, Float32SumOf16MElementsIsExact)
{
    /* A float32 accumulator stops at 2^24; the result must not. */
    int64_t n = ((int64_t)1 << 24) + 4096;
    Tensor x(pith_full(1, &n, 1.0, PITH_FLOAT32));
    ASSERT_NE(x, nullptr);
    Tensor s(pith_sum(x.get(), 0, nullptr, false));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(Values(s.get()), std::vector<double>{(double)n});
    Tensor m(pith_mean(x.get(), 0, nullptr, false));
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(Values(m.get()), std::vector<double>{1.0});
}

TEST_F(ReduceSum, LargeFloat32SumMatchesDoubleReference)
{
    std::mt19937 rng(7);
    int64_t n = 3000017;
    std::vector<double> v = RandomValues(rng, n, PITH_FLOAT32, -1, 3);
    std::vector<float> f(v.begin(), v.end());
    Tensor x(pith_from_data(f.data(), 1, &n, PITH_FLOAT32));
    double ref = 0;
    for (float e : f)
        ref += e;
    Tensor s(pith_sum(x.get(), 0, nullptr, false));
    ASSERT_NE(s, nullptr);
    EXPECT_NEAR(Values(s.get())[0], ref, std::fabs(ref) * 1e-7);
}

/* Shapes that take each order of the engine (full, inner, outer), above the grain size,
 * contiguous and transposed. */
TEST_F(ReduceSum, LargeReductionsMatchReferenceInEveryLoopOrder)
{
    std::mt19937 rng(11);
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_INT32, PITH_FLOAT64}) {
        for (Layout layout : {Layout::Contiguous, Layout::Permuted}) {
            Shape sizes = {513, 301};
            Tensor x = MakeTensor(rng, sizes, dtype, layout);
            auto vals = Values(x.get());
            for (uint32_t mask : {1u, 2u, 3u}) {
                std::vector<int> dims;
                for (int d = 0; d < 2; d++)
                    if (mask & (1u << d))
                        dims.push_back(d);
                Tensor r(pith_sum(x.get(), (int)dims.size(), dims.data(), false));
                ASSERT_NE(r, nullptr);
                std::vector<double> want, tol;
                for (auto &g : Groups(sizes, vals, mask)) {
                    want.push_back(RefSum(g, !IsFloat(dtype)));
                    tol.push_back(IsFloat(dtype) ? OutputPrecision(dtype) * std::fabs(want.back()) +
                                                       SumErrorBound(dtype) * AbsSum(g)
                                                 : 0);
                }
                EXPECT_TRUE(AllClose(r.get(), want, tol)) << pith_dtype_name(dtype) << " mask "
                                                          << mask << " layout " << (int)layout;
            }
        }
    }
}

TEST_F(ReduceSum, SumDoesNotDependOnTheThreadCount)
{
    std::mt19937 rng(5);
    int64_t n = 1 << 20;
    std::vector<double> v = RandomValues(rng, n, PITH_FLOAT32);
    std::vector<float> f(v.begin(), v.end());
    Tensor x(pith_from_data(f.data(), 1, &n, PITH_FLOAT32));
    int saved = pith_get_num_threads();
    float results[2];
    for (int threads = 1; threads <= 2; threads++) {
        pith_set_num_threads(threads);
        Tensor s(pith_sum(x.get(), 0, nullptr, false));
        ASSERT_NE(s, nullptr);
        results[threads - 1] = *(const float *)pith_data_ptr(s.get());
    }
    pith_set_num_threads(saved);
    EXPECT_EQ(memcmp(&results[0], &results[1], sizeof(float)), 0);
}

/* ---- Meta ---- */

TEST_F(ReduceSum, MetaSumGivesShapeAndDtypeWithoutData)
{
    int64_t sizes[] = {4, 5, 6};
    Tensor x(pith_empty_strided(3, sizes, nullptr, PITH_INT16, PITH_META));
    ASSERT_NE(x, nullptr) << pith_last_error();
    int dims[] = {-1, 0};
    Tensor r(pith_sum(x.get(), 2, dims, true));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(r.get()), PITH_META);
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_INT64);
    EXPECT_EQ(Sizes(r.get()), (Shape{1, 5, 1}));
    EXPECT_EQ(pith_data_ptr(r.get()), nullptr);
    Tensor m(pith_mean(x.get(), 0, nullptr, false));
    EXPECT_EQ(m, nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "Got: Short"));
    Tensor p(pith_prod(x.get(), 1, &dims[0], false));
    ASSERT_NE(p, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(p.get()), (Shape{4, 5}));
    int dup[] = {1, 1};
    EXPECT_EQ(pith_prod(x.get(), 2, dup, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "dim 1 appears multiple times"));
}

} // namespace
} // namespace pith_d_test
