// sort, argsort, topk, cumsum/cumprod and multinomial: values and indices against plain
// references (std::stable_sort with NaN as the largest value, running sums in the
// accumulator type), stability, NaN and signed zeros, every dtype and layout, 0-dim and
// empty inputs, the out= and in-place forms, errors, independence from the thread count,
// and multinomial's reproducibility and (with fixed seeds, so never flaky) frequencies.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "reduce_test_util.h"

namespace pith_d_test {
namespace {

class SortingTest : public ReduceFixture {
protected:
    int threads_before_ = 0;
    void SetUp() override
    {
        ReduceFixture::SetUp();
        threads_before_ = pith_get_num_threads();
    }
    void TearDown() override
    {
        pith_set_num_threads(threads_before_);
        ReduceFixture::TearDown();
    }
};

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The value order of the reference: NaN above everything, -0.0 equal to 0.0.
bool ValueLess(double a, double b)
{
    if (std::isnan(a))
        return false;
    return std::isnan(b) || a < b;
}

struct Lines {
    int64_t lines = 1, len = 1, inner = 1;
};

Lines LinesOf(const Shape &sizes, int dim)
{
    Lines l;
    for (int i = 0; i < (int)sizes.size(); i++) {
        if (i == dim)
            l.len = sizes[i];
        else
            l.lines *= sizes[i];
        if (i > dim)
            l.inner *= sizes[i];
    }
    return l;
}

// The reference of sort / topk: the first k of each line's stable order, as row-major
// values and indices of the result.
void ReferenceSort(const std::vector<double> &v, const Shape &sizes, int dim, bool flip,
                   int64_t k, std::vector<double> *values, std::vector<int64_t> *indices)
{
    Lines g = LinesOf(sizes, dim);
    values->assign((size_t)(g.lines * k), 0);
    indices->assign((size_t)(g.lines * k), 0);
    for (int64_t l = 0; l < g.lines; l++) {
        int64_t base = (l / g.inner) * g.len * g.inner + l % g.inner;
        std::vector<int64_t> order((size_t)g.len);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
            double x = v[(size_t)(base + a * g.inner)], y = v[(size_t)(base + b * g.inner)];
            return flip ? ValueLess(y, x) : ValueLess(x, y);
        });
        int64_t out = (l / g.inner) * k * g.inner + l % g.inner;
        for (int64_t j = 0; j < k; j++) {
            (*values)[(size_t)(out + j * g.inner)] = v[(size_t)(base + order[(size_t)j] * g.inner)];
            (*indices)[(size_t)(out + j * g.inner)] = order[(size_t)j];
        }
    }
}

std::vector<int64_t> Ints(const pith_tensor *t)
{
    std::vector<int64_t> out;
    for (double v : Values(t))
        out.push_back((int64_t)v);
    return out;
}

// Equal element for element, NaN equal to NaN, and zeros of the same sign.
void ExpectSameValues(const std::vector<double> &got, const std::vector<double> &want,
                      const std::string &what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); i++) {
        if (std::isnan(want[i]))
            EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
        else
            EXPECT_EQ(got[i], want[i]) << what << " at " << i;
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << what << " at " << i;
    }
}

struct SortResult {
    Tensor values, indices;
};

SortResult Sort(const pith_tensor *x, int dim, bool descending)
{
    pith_tensor *v = nullptr, *i = nullptr;
    EXPECT_EQ(pith_sort(x, dim, descending, &v, &i), PITH_OK) << pith_last_error();
    return {Tensor(v), Tensor(i)};
}

SortResult Topk(const pith_tensor *x, int64_t k, int dim, bool largest)
{
    pith_tensor *v = nullptr, *i = nullptr;
    EXPECT_EQ(pith_topk(x, k, dim, largest, &v, &i), PITH_OK) << pith_last_error();
    return {Tensor(v), Tensor(i)};
}

// ---- boxed calls of the forms without a typed C entry point ----

const pith_op *Op(const char *name)
{
    const pith_op *op = pith_op_find(name);
    EXPECT_NE(op, nullptr) << name;
    return op;
}

// sort.values / topk.values: (self, [k,] dim, flag, [sorted,] values, indices).
pith_status SortInto(const char *name, const pith_tensor *x, int64_t k, int dim, bool flag,
                     const pith_tensor *values, const pith_tensor *indices)
{
    bool topk = std::string(name) == "topk.values";
    pith_stack *s = pith_stack_new();
    pith_stack_push_tensor(s, x);
    if (topk)
        pith_stack_push_int(s, k);
    pith_stack_push_int(s, dim);
    pith_stack_push_bool(s, flag);
    if (topk)
        pith_stack_push_bool(s, true);
    pith_stack_push_tensor(s, values);
    pith_stack_push_tensor(s, indices);
    pith_status status = pith_call_boxed(Op(name), s);
    if (status == PITH_OK) {
        EXPECT_EQ(pith_stack_size(s), 2u);
        Tensor v(pith_stack_get_tensor(s, 0)), i(pith_stack_get_tensor(s, 1));
        EXPECT_EQ(v.get(), values);  // the out tensors themselves come back
        EXPECT_EQ(i.get(), indices);
    }
    pith_stack_free(s);
    return status;
}

// cumsum / cumprod (out = nullptr), their .out forms and the in-place ones; dtype < 0 is
// None. The result, or NULL on error.
Tensor Scan(const char *name, const pith_tensor *x, int dim, int dtype,
            const pith_tensor *out = nullptr)
{
    pith_stack *s = pith_stack_new();
    pith_stack_push_tensor(s, x);
    pith_stack_push_int(s, dim);
    if (dtype < 0)
        pith_stack_push_none(s);
    else
        pith_stack_push_dtype(s, (pith_dtype)dtype);
    if (out)
        pith_stack_push_tensor(s, out);
    Tensor r;
    if (pith_call_boxed(Op(name), s) == PITH_OK)
        r.reset(pith_stack_get_tensor(s, 0));
    pith_stack_free(s);
    return r;
}

// ---- sort ----

TEST_F(SortingTest, SortPutsNanLastAscendingAndFirstDescending)
{
    Tensor x = FromValues({6}, PITH_FLOAT32, {3, kNaN, -kInf, 1, kInf, kNaN});
    SortResult a = Sort(x.get(), 0, false);
    ExpectSameValues(Values(a.values.get()), {-kInf, 1, 3, kInf, kNaN, kNaN}, "ascending");
    EXPECT_EQ(Ints(a.indices.get()), (std::vector<int64_t>{2, 3, 0, 4, 1, 5}));
    SortResult d = Sort(x.get(), 0, true);
    ExpectSameValues(Values(d.values.get()), {kNaN, kNaN, kInf, 3, 1, -kInf}, "descending");
    EXPECT_EQ(Ints(d.indices.get()), (std::vector<int64_t>{1, 5, 4, 0, 3, 2}));
}

TEST_F(SortingTest, SortKeepsTheSignOfZeroAndTreatsZerosAsEqual)
{
    Tensor x = FromValues({4}, PITH_FLOAT64, {0.0, -0.0, -1, -0.0});
    for (bool descending : {false, true}) {
        SortResult r = Sort(x.get(), 0, descending);
        std::vector<int64_t> want = descending ? std::vector<int64_t>{0, 1, 3, 2}
                                               : std::vector<int64_t>{2, 0, 1, 3};
        EXPECT_EQ(Ints(r.indices.get()), want);
        std::vector<double> v = Values(r.values.get());
        for (size_t j = 0; j < 4; j++)
            EXPECT_EQ(std::signbit(v[j]), want[j] == 1 || want[j] == 3 || want[j] == 2);
    }
}

TEST_F(SortingTest, SortIsStableOnLongLinesOfTies)
{
    // Many equal values in a line long enough to need merging: equal values keep their
    // order, both ways.
    std::mt19937 rng(7);
    for (pith_dtype dtype : kAllDtypes) {
        Shape sizes{3, 5000};
        Tensor x = FromValues(sizes, dtype, RandomValues(rng, Numel(sizes), dtype, -2, 2, 1));
        for (bool descending : {false, true}) {
            SortResult r = Sort(x.get(), 1, descending);
            std::vector<double> wv;
            std::vector<int64_t> wi;
            ReferenceSort(Values(x.get()), sizes, 1, descending, 5000, &wv, &wi);
            EXPECT_EQ(Ints(r.indices.get()), wi) << pith_dtype_name(dtype);
            ExpectSameValues(Values(r.values.get()), wv, pith_dtype_name(dtype));
        }
    }
}

TEST_F(SortingTest, SortMatchesTheReferenceForEveryDtypeLayoutAndDim)
{
    std::mt19937 rng(11);
    for (pith_dtype dtype : kAllDtypes)
        for (Layout layout : kLayouts)
            for (const Shape &sizes : {Shape{7}, Shape{4, 9}, Shape{3, 1, 40}, Shape{2, 0, 3}}) {
                Tensor x = MakeTensor(rng, sizes, dtype, layout, -3, 3, 0.5);
                ASSERT_NE(x, nullptr);
                for (int dim = -(int)sizes.size(); dim < (int)sizes.size(); dim++)
                    for (bool descending : {false, true}) {
                        int d = dim < 0 ? dim + (int)sizes.size() : dim;
                        SortResult r = Sort(x.get(), dim, descending);
                        ASSERT_NE(r.values, nullptr);
                        EXPECT_EQ(Sizes(r.values.get()), sizes);
                        EXPECT_EQ(pith_tensor_dtype(r.values.get()), dtype);
                        EXPECT_EQ(pith_tensor_dtype(r.indices.get()), PITH_INT64);
                        std::vector<double> wv;
                        std::vector<int64_t> wi;
                        ReferenceSort(Values(x.get()), sizes, d, descending,
                                      sizes[(size_t)d], &wv, &wi);
                        EXPECT_EQ(Ints(r.indices.get()), wi) << pith_dtype_name(dtype);
                        ExpectSameValues(Values(r.values.get()), wv, pith_dtype_name(dtype));
                        Tensor a(pith_argsort(x.get(), dim, descending));
                        EXPECT_EQ(Ints(a.get()), wi);
                    }
            }
}

TEST_F(SortingTest, ZeroDimTensorsSortAlongDimZeroOrMinusOne)
{
    Tensor x = FromValues({}, PITH_FLOAT32, {2.5});
    for (int dim : {0, -1}) {
        SortResult r = Sort(x.get(), dim, false);
        EXPECT_EQ(Sizes(r.values.get()), Shape{});
        EXPECT_EQ(Values(r.values.get()), std::vector<double>{2.5});
        EXPECT_EQ(Ints(r.indices.get()), std::vector<int64_t>{0});
    }
    pith_tensor *v = nullptr, *i = nullptr;
    EXPECT_EQ(pith_sort(x.get(), 1, false, &v, &i), PITH_ERR_INDEX);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "expected to be in range of [-1, 0], but got 1"));
    EXPECT_EQ(v, nullptr);
}

TEST_F(SortingTest, BadDimIsAnIndexError)
{
    Tensor x = FromValues({2, 3}, PITH_INT32, {1, 2, 3, 4, 5, 6});
    EXPECT_EQ(pith_argsort(x.get(), 2, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "argsort: Dimension out of range"));
    EXPECT_EQ(pith_argsort(x.get(), -3, false), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "[-2, 1], but got -3"));
    EXPECT_EQ(pith_cumsum(x.get(), 2), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "cumsum: Dimension out of range"));
}

TEST_F(SortingTest, ResultsDoNotDependOnTheThreadCount)
{
    std::mt19937 rng(3);
    Shape sizes{300, 257};
    Tensor x = FromValues(sizes, PITH_FLOAT32, RandomValues(rng, Numel(sizes), PITH_FLOAT32,
                                                            -1, 1, 0.125));
    pith_set_num_threads(1);
    SortResult a = Sort(x.get(), 1, true);
    Tensor ca(pith_cumsum(x.get(), 0));
    pith_set_num_threads(2);
    SortResult b = Sort(x.get(), 1, true);
    Tensor cb(pith_cumsum(x.get(), 0));
    EXPECT_EQ(Ints(a.indices.get()), Ints(b.indices.get()));
    EXPECT_EQ(Values(ca.get()), Values(cb.get()));
}

// ---- topk ----

TEST_F(SortingTest, TopkIsTheFirstKOfTheStableSort)
{
    std::mt19937 rng(5);
    for (pith_dtype dtype : {PITH_UINT8, PITH_INT64, PITH_FLOAT16, PITH_BFLOAT16, PITH_FLOAT32,
                             PITH_FLOAT64})
        for (Layout layout : {Layout::Contiguous, Layout::Permuted, Layout::Stepped}) {
            Shape sizes{3, 200};
            Tensor x = MakeTensor(rng, sizes, dtype, layout, -3, 3, 0.25);
            for (int64_t k : {0, 1, 5, 24, 26, 199, 200})
                for (bool largest : {true, false}) {
                    SortResult r = Topk(x.get(), k, 1, largest);
                    ASSERT_NE(r.values, nullptr);
                    EXPECT_EQ(Sizes(r.values.get()), (Shape{3, k}));
                    std::vector<double> wv;
                    std::vector<int64_t> wi;
                    ReferenceSort(Values(x.get()), sizes, 1, largest, k, &wv, &wi);
                    EXPECT_EQ(Ints(r.indices.get()), wi) << k << " " << largest;
                    ExpectSameValues(Values(r.values.get()), wv, "topk");
                }
        }
}

TEST_F(SortingTest, TopkCountsNanAsTheLargestValue)
{
    Tensor x = FromValues({5}, PITH_FLOAT32, {1, kNaN, 3, -2, kNaN});
    SortResult hi = Topk(x.get(), 3, 0, true);
    EXPECT_EQ(Ints(hi.indices.get()), (std::vector<int64_t>{1, 4, 2}));
    SortResult lo = Topk(x.get(), 3, 0, false);
    EXPECT_EQ(Ints(lo.indices.get()), (std::vector<int64_t>{3, 0, 2}));
}

TEST_F(SortingTest, TopkOfAZeroDimTensorTakesZeroOrOne)
{
    Tensor x = FromValues({}, PITH_INT32, {4});
    SortResult one = Topk(x.get(), 1, -1, true);
    EXPECT_EQ(Sizes(one.values.get()), Shape{});
    EXPECT_EQ(Values(one.values.get()), std::vector<double>{4});
    SortResult none = Topk(x.get(), 0, 0, true);
    EXPECT_EQ(Sizes(none.values.get()), Shape{});
    pith_tensor *v = nullptr, *i = nullptr;
    EXPECT_EQ(pith_topk(x.get(), 2, 0, true, &v, &i), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "selected index k out of range"));
}

TEST_F(SortingTest, TopkRefusesKOutOfRangeAndBool)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, {1, 2, 3, 4, 5, 6});
    pith_tensor *v = nullptr, *i = nullptr;
    for (int64_t k : {-1, 4}) {
        EXPECT_EQ(pith_topk(x.get(), k, 1, true, &v, &i), PITH_ERR_VALUE);
        EXPECT_TRUE(HasError(PITH_ERR_VALUE, "topk: selected index k out of range"));
    }
    EXPECT_EQ(pith_topk(x.get(), 2, 0, true, &v, &i), PITH_OK);  // size 2 along dim 0
    pith_release(v);
    pith_release(i);
    Tensor b = FromValues({3}, PITH_BOOL, {1, 0, 1});
    EXPECT_EQ(pith_topk(b.get(), 1, 0, true, &v, &i), PITH_ERR_TYPE);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "topk does not support bool dtypes"));
    EXPECT_EQ(pith_topk(x.get(), 1, 0, true, nullptr, &i), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "must not be NULL"));
}

TEST_F(SortingTest, TopkOfEmptyLines)
{
    Shape sizes{0, 3};
    Tensor x(pith_zeros(2, sizes.data(), PITH_FLOAT32));
    SortResult r = Topk(x.get(), 2, 1, true);
    EXPECT_EQ(Sizes(r.values.get()), (Shape{0, 2}));
    SortResult s = Topk(x.get(), 0, 0, true);
    EXPECT_EQ(Sizes(s.indices.get()), (Shape{0, 3}));
}

// ---- out= forms ----

TEST_F(SortingTest, SortIntoNonContiguousAndEmptyOuts)
{
    Tensor x = FromValues({2, 3}, PITH_FLOAT32, {3, 1, 2, 0, 5, 4});
    Shape t{3, 2};
    Tensor vb(pith_zeros(2, t.data(), PITH_FLOAT32)), ib(pith_zeros(2, t.data(), PITH_INT64));
    Tensor v(pith_t(vb.get())), i(pith_t(ib.get()));  // [2, 3] with strides (1, 2)
    ASSERT_EQ(SortInto("sort.values", x.get(), 0, 1, false, v.get(), i.get()), PITH_OK)
        << pith_last_error();
    EXPECT_EQ(Values(v.get()), (std::vector<double>{1, 2, 3, 0, 4, 5}));
    EXPECT_EQ(Ints(i.get()), (std::vector<int64_t>{1, 2, 0, 0, 2, 1}));
    const int64_t zero = 0;
    Tensor ev(pith_empty(1, &zero, PITH_FLOAT32)), ei(pith_empty(1, &zero, PITH_INT64));
    ASSERT_EQ(SortInto("topk.values", x.get(), 2, 1, true, ev.get(), ei.get()), PITH_OK);
    EXPECT_EQ(Sizes(ev.get()), (Shape{2, 2}));  // resized
    EXPECT_EQ(Values(ev.get()), (std::vector<double>{3, 2, 5, 4}));
    EXPECT_EQ(Ints(ei.get()), (std::vector<int64_t>{0, 2, 1, 2}));
}

TEST_F(SortingTest, SortIntoItsOwnInput)
{
    Tensor x = FromValues({5}, PITH_INT64, {4, 2, 5, 1, 3});
    const int64_t n = 5;
    Tensor i(pith_empty(1, &n, PITH_INT64));
    ASSERT_EQ(SortInto("sort.values", x.get(), 0, 0, true, x.get(), i.get()), PITH_OK);
    EXPECT_EQ(Values(x.get()), (std::vector<double>{5, 4, 3, 2, 1}));
    EXPECT_EQ(Ints(i.get()), (std::vector<int64_t>{2, 0, 4, 1, 3}));
}

TEST_F(SortingTest, SortOutErrors)
{
    Tensor x = FromValues({3}, PITH_FLOAT32, {3, 1, 2});
    const int64_t n = 3, two = 2;
    Tensor f64(pith_empty(1, &n, PITH_FLOAT64)), f32(pith_empty(1, &n, PITH_FLOAT32));
    Tensor i64(pith_empty(1, &n, PITH_INT64)), i32(pith_empty(1, &n, PITH_INT32));
    Tensor small(pith_empty(1, &two, PITH_FLOAT32));
    EXPECT_EQ(SortInto("sort.values", x.get(), 0, 0, false, f64.get(), i64.get()), PITH_ERR_TYPE);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "Expected out tensor to have dtype float32, but got "
                                        "float64 instead"));
    EXPECT_EQ(SortInto("sort.values", x.get(), 0, 0, false, f32.get(), i32.get()), PITH_ERR_TYPE);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "dtype int64, but got int32"));
    EXPECT_EQ(SortInto("sort.values", x.get(), 0, 0, false, small.get(), i64.get()),
              PITH_ERR_VALUE);
    pith_clear_error();
    Tensor xi = FromValues({3}, PITH_INT64, {3, 1, 2});
    EXPECT_EQ(SortInto("sort.values", xi.get(), 0, 0, false, i64.get(), i64.get()),
              PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "must not share memory"));
}

// ---- cumsum / cumprod ----

TEST_F(SortingTest, ScansMatchRunningSumsAndProductsForEveryDtypeLayoutAndDim)
{
    // Floating values are halves in [-1, 1], whose sums and products every float dtype
    // holds (or underflows to within 1e-6); integer results wrap, as int64 does.
    std::mt19937 rng(13);
    for (pith_dtype dtype : kAllDtypes)
        for (Layout layout : kLayouts)
            for (const Shape &sizes : {Shape{6}, Shape{3, 4}, Shape{2, 3, 70}, Shape{0, 2}}) {
                Tensor x = MakeTensor(rng, sizes, dtype, layout, -1, 1, 0.5);
                std::vector<double> v = Values(x.get());
                pith_dtype result = IsFloat(dtype) ? dtype : PITH_INT64;
                for (int d = 0; d < (int)sizes.size(); d++)
                    for (bool prod : {false, true}) {
                        Tensor r(prod ? pith_cumprod(x.get(), d) : pith_cumsum(x.get(), d));
                        ASSERT_NE(r, nullptr) << pith_last_error();
                        EXPECT_EQ(pith_tensor_dtype(r.get()), result);
                        EXPECT_EQ(Sizes(r.get()), sizes);
                        Lines g = LinesOf(sizes, d);
                        std::vector<double> want(v.size());
                        std::vector<int64_t> want_int(v.size());
                        for (int64_t l = 0; l < g.lines; l++) {
                            int64_t base = (l / g.inner) * g.len * g.inner + l % g.inner;
                            double acc = prod ? 1 : 0;
                            uint64_t iacc = prod ? 1 : 0;
                            for (int64_t j = 0; j < g.len; j++) {
                                size_t e = (size_t)(base + j * g.inner);
                                acc = prod ? acc * v[e] : acc + v[e];
                                uint64_t iv = (uint64_t)(int64_t)v[e];
                                iacc = prod ? iacc * iv : iacc + iv;
                                want[e] = acc;
                                want_int[e] = (int64_t)iacc;
                            }
                        }
                        if (!IsFloat(dtype)) { /* read back as doubles, so compare so */
                            std::vector<double> wd(want_int.begin(), want_int.end());
                            EXPECT_EQ(Values(r.get()), wd) << pith_dtype_name(dtype);
                            continue;
                        }
                        std::vector<double> got = Values(r.get());
                        for (size_t e = 0; e < want.size(); e++)
                            EXPECT_NEAR(got[e], want[e], 1e-6)
                                << pith_dtype_name(dtype) << " prod " << prod << " at " << e;
                    }
            }
}

TEST_F(SortingTest, ScansAccumulateAsPyTorchDoes)
{
    // float32 accumulates in double: 1e8 + 1 is kept in the sum though not in the output.
    Tensor f = FromValues({3}, PITH_FLOAT32, {1e8, 1, -1e8});
    Tensor cf(pith_cumsum(f.get(), 0));
    EXPECT_EQ(Values(cf.get()), (std::vector<double>{1e8, 1e8, 1}));
    // float16 accumulates in float: 2048 + 1 = 2049 is kept; the output rounds to 2048.
    Tensor h = FromValues({3}, PITH_FLOAT16, {2048, 1, -2048});
    Tensor ch(pith_cumsum(h.get(), 0));
    EXPECT_EQ(Values(ch.get()), (std::vector<double>{2048, 2048, 1}));
    // Integers wrap in their dtype when dtype= keeps it; NaN propagates.
    Tensor i8 = FromValues({2}, PITH_INT8, {100, 100});
    Tensor w = Scan("cumsum", i8.get(), 0, PITH_INT8);
    EXPECT_EQ(Values(w.get()), (std::vector<double>{100, -56}));
    Tensor wide(pith_cumsum(i8.get(), 0));
    EXPECT_EQ(Values(wide.get()), (std::vector<double>{100, 200}));
    Tensor big = FromValues({3}, PITH_INT64, {1LL << 62, 4, 1});
    Tensor p(pith_cumprod(big.get(), 0));
    EXPECT_EQ(Ints(p.get()), (std::vector<int64_t>{1LL << 62, 0, 0}));
    Tensor n = FromValues({3}, PITH_FLOAT64, {1, kNaN, 2});
    std::vector<double> cn = Values(Tensor(pith_cumsum(n.get(), 0)).get());
    EXPECT_EQ(cn[0], 1);
    EXPECT_TRUE(std::isnan(cn[1]) && std::isnan(cn[2]));
}

TEST_F(SortingTest, ScanDtypeArgumentConvertsFirst)
{
    Tensor f = FromValues({3}, PITH_FLOAT32, {1.5, 2.5, 3.5});
    Tensor r = Scan("cumsum", f.get(), 0, PITH_INT32);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_INT32);
    EXPECT_EQ(Values(r.get()), (std::vector<double>{1, 3, 6}));
    Tensor b = FromValues({3}, PITH_BOOL, {1, 1, 0});
    Tensor rb(pith_cumsum(b.get(), 0));
    EXPECT_EQ(pith_tensor_dtype(rb.get()), PITH_INT64);
    EXPECT_EQ(Values(rb.get()), (std::vector<double>{1, 2, 2}));
    EXPECT_EQ(Scan("cumprod", f.get(), 0, PITH_BOOL), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "not implemented for 'Bool'"));
}

TEST_F(SortingTest, ScanOutTakesOutsDtypeUnlessDtypeIsGiven)
{
    Tensor x = FromValues({3}, PITH_INT32, {3, 1, 2});
    const int64_t n = 3;
    Tensor out(pith_empty(1, &n, PITH_FLOAT64));
    Tensor r = Scan("cumsum.out", x.get(), 0, -1, out.get());
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(r.get(), out.get());
    EXPECT_EQ(Values(out.get()), (std::vector<double>{3, 4, 6}));
    EXPECT_EQ(Scan("cumsum.out", x.get(), 0, PITH_FLOAT32, out.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "Expected out tensor to have dtype float32, but got "
                                        "float64"));
    // A transposed out keeps its strides; an out that is the input works.
    Shape t{3, 2};
    Tensor base(pith_zeros(2, t.data(), PITH_INT64));
    Tensor tout(pith_t(base.get()));
    Tensor x2 = FromValues({2, 3}, PITH_INT64, {1, 2, 3, 4, 5, 6});
    ASSERT_NE(Scan("cumprod.out", x2.get(), 1, -1, tout.get()), nullptr);
    EXPECT_EQ(Values(tout.get()), (std::vector<double>{1, 2, 6, 4, 20, 120}));
    ASSERT_NE(Scan("cumsum.out", x2.get(), 0, -1, x2.get()), nullptr);
    EXPECT_EQ(Values(x2.get()), (std::vector<double>{1, 2, 3, 5, 7, 9}));
}

TEST_F(SortingTest, InPlaceScansKeepTheDtype)
{
    Tensor x = FromValues({2, 3}, PITH_INT8, {100, 1, 2, 100, 3, 4});
    Tensor r = Scan("cumsum_", x.get(), 0, -1);
    ASSERT_EQ(r.get(), x.get());
    EXPECT_EQ(Values(x.get()), (std::vector<double>{100, 1, 2, -56, 4, 6}));
    Tensor f = FromValues({4, 3}, PITH_FLOAT32, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    Tensor ft(pith_t(f.get()));  // in place through a non-contiguous view
    ASSERT_NE(Scan("cumprod_", ft.get(), 1, -1), nullptr);
    EXPECT_EQ(Values(f.get()), (std::vector<double>{1, 2, 3, 4, 10, 18, 28, 80, 162, 280, 880,
                                                    1944}));
    EXPECT_EQ(Scan("cumsum_", f.get(), 0, PITH_FLOAT64), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "Bad in-place call: input tensor dtype float32 and "
                                        "output tensor dtype float64 should match"));
    Tensor b = FromValues({2}, PITH_BOOL, {1, 0});
    EXPECT_EQ(Scan("cumsum_", b.get(), 0, -1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "not implemented for 'Bool'"));
}

TEST_F(SortingTest, ScansOfZeroDimAndEmptyTensors)
{
    Tensor x = FromValues({}, PITH_INT16, {7});
    for (int dim : {0, -1}) {
        Tensor r(pith_cumsum(x.get(), dim));
        EXPECT_EQ(Sizes(r.get()), Shape{});
        EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_INT64);
        EXPECT_EQ(Values(r.get()), std::vector<double>{7});
    }
    EXPECT_EQ(pith_cumprod(x.get(), 1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "Dimension out of range"));
    Shape e{3, 0};
    Tensor empty(pith_zeros(2, e.data(), PITH_FLOAT32));
    Tensor r(pith_cumsum(empty.get(), 1));
    EXPECT_EQ(Sizes(r.get()), e);
}

// ---- multinomial ----

Tensor Probs(const Shape &sizes, const std::vector<double> &v, pith_dtype dtype = PITH_FLOAT32)
{
    return FromValues(sizes, dtype, v);
}

TEST_F(SortingTest, MultinomialIsReproducibleWithAGeneratorAndIndependentOfThreads)
{
    std::mt19937 rng(1);
    Shape sizes{64, 500};
    Tensor p = Probs(sizes, RandomValues(rng, Numel(sizes), PITH_FLOAT32, 0, 1));
    for (bool replacement : {false, true}) {
        pith_generator *g = pith_generator_new(42);
        pith_set_num_threads(1);
        Tensor a(pith_multinomial(p.get(), 20, replacement, g));
        Tensor b(pith_multinomial(p.get(), 20, replacement, g));
        pith_generator_manual_seed(g, 42);
        pith_set_num_threads(2);
        Tensor c(pith_multinomial(p.get(), 20, replacement, g));
        pith_generator_release(g);
        ASSERT_NE(a, nullptr) << pith_last_error();
        EXPECT_EQ(Sizes(a.get()), (Shape{64, 20}));
        EXPECT_EQ(Values(a.get()), Values(c.get()));   // same seed, other thread count
        EXPECT_NE(Values(a.get()), Values(b.get()));   // the generator advanced
    }
}

TEST_F(SortingTest, MultinomialWithoutReplacementDrawsDistinctNonzeroCategoriesFirst)
{
    Tensor p = Probs({2, 6}, {0, 1, 0, 2, 3, 0, 1, 1, 1, 1, 1, 1}, PITH_FLOAT64);
    for (uint64_t seed = 0; seed < 20; seed++) {
        pith_generator *g = pith_generator_new(seed);
        Tensor s(pith_multinomial(p.get(), 5, false, g));
        pith_generator_release(g);
        std::vector<int64_t> v = Ints(s.get());
        std::vector<int64_t> row0(v.begin(), v.begin() + 5), row1(v.begin() + 5, v.end());
        std::vector<int64_t> first3(row0.begin(), row0.begin() + 3);
        std::sort(first3.begin(), first3.end());
        EXPECT_EQ(first3, (std::vector<int64_t>{1, 3, 4}));
        EXPECT_EQ(row0[3], 0);  // then the zero categories, lowest index first
        EXPECT_EQ(row0[4], 2);
        std::sort(row1.begin(), row1.end());
        EXPECT_TRUE(std::adjacent_find(row1.begin(), row1.end()) == row1.end());
    }
}

TEST_F(SortingTest, MultinomialFrequenciesFollowTheProbabilities)
{
    // 200000 draws of p = (0.1, 0.2, 0, 0.3, 0.4): each frequency is within 0.005 of its
    // probability (more than 4 standard deviations; a fixed seed, so never flaky), and the
    // zero category never comes up. The first draw without replacement, one per row of a
    // batch, follows the same distribution.
    const std::vector<double> probs{1, 2, 0, 3, 4};
    const int64_t n = 200000;
    Tensor p = Probs({5}, probs, PITH_FLOAT32);
    pith_generator *g = pith_generator_new(2024);
    Tensor with(pith_multinomial(p.get(), n, true, g));
    std::vector<double> batch;
    for (int64_t r = 0; r < n; r++)
        batch.insert(batch.end(), probs.begin(), probs.end());
    Tensor pb = Probs({n, 5}, batch, PITH_FLOAT32);
    Tensor without(pith_multinomial(pb.get(), 1, false, g));
    pith_generator_release(g);
    for (const Tensor *s : {&with, &without}) {
        std::vector<double> count(5, 0);
        for (int64_t c : Ints(s->get()))
            count[(size_t)c]++;
        EXPECT_EQ(count[2], 0);
        for (size_t c = 0; c < 5; c++)
            EXPECT_NEAR(count[c] / n, probs[c] / 10, 0.005) << c;
    }
}

TEST_F(SortingTest, MultinomialChecksItsArguments)
{
    Tensor p = Probs({3}, {0.2, 0.3, 0.5});
    EXPECT_EQ(pith_multinomial(p.get(), 4, false, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "cannot sample n_sample > prob_dist.size(-1) samples "
                                         "without replacement"));
    EXPECT_EQ(pith_multinomial(p.get(), 0, true, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "cannot sample n_sample <= 0 samples"));
    Tensor s = FromValues({}, PITH_FLOAT32, {1});
    EXPECT_EQ(pith_multinomial(s.get(), 1, false, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "prob_dist must be 1 or 2 dim"));
    Tensor i = FromValues({2}, PITH_INT64, {1, 2});
    EXPECT_EQ(pith_multinomial(i.get(), 1, false, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "only supports floating-point dtypes for input, got: "
                                        "Long"));
    struct Bad {
        std::vector<double> v;
        bool replacement;
        const char *message;
    } bad[] = {
        {{1, -1}, false, "contains either `inf`, `nan` or element < 0"},
        {{1, kNaN}, false, "contains either `inf`, `nan` or element < 0"},
        {{kInf, 1}, false, "contains either `inf`, `nan` or element < 0"},
        {{0, 0}, false, "(sum of probabilities <= 0)"},
        {{1, -1}, true, "(encountering probability entry < 0)"},
        {{1, kNaN}, true, "(encountering probability entry < 0)"},
        {{1, kInf}, true, "(encountering probability entry = infinity or NaN)"},
        {{0, 0}, true, "(sum of probabilities <= 0)"},
    };
    for (const Bad &b : bad) {
        Tensor t = Probs({2}, b.v);
        EXPECT_EQ(pith_multinomial(t.get(), 2, b.replacement, nullptr), nullptr);
        EXPECT_TRUE(HasError(PITH_ERR_VALUE, b.message)) << b.message;
    }
    // A bad row anywhere in a batch is found before anything is drawn.
    Tensor rows = Probs({2, 2}, {1, 1, 0, 0});
    EXPECT_EQ(pith_multinomial(rows.get(), 1, false, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "sum of probabilities <= 0"));
}

TEST_F(SortingTest, MultinomialOfEmptyBatchesAndHugeValues)
{
    Shape e{0, 3};
    Tensor empty(pith_zeros(2, e.data(), PITH_FLOAT32));
    Tensor r(pith_multinomial(empty.get(), 2, true, nullptr));
    EXPECT_EQ(Sizes(r.get()), (Shape{0, 2}));
    // Sums that would overflow double, and subnormal rows, still sample correctly.
    Tensor huge = Probs({3}, {1e308, 1e308, 0}, PITH_FLOAT64);
    for (int64_t c : Ints(Tensor(pith_multinomial(huge.get(), 50, true, nullptr)).get()))
        EXPECT_LT(c, 2);
    Tensor tiny = Probs({3}, {0, 1e-310, 0}, PITH_FLOAT64);
    EXPECT_EQ(Ints(Tensor(pith_multinomial(tiny.get(), 1, false, nullptr)).get()),
              std::vector<int64_t>{1});
}

}  // namespace
}  // namespace pith_d_test
