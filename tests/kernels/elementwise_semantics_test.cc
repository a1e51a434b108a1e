// elementwise_semantics_test.cc — the rules of particular ops: wrapping integers, integer
// division (tests/data/int_division.csv) and division by zero, NaN, alpha, pow, gelu,
// clamp, where, and the copies: copy_, to, clone, contiguous and every dtype conversion.
#include <limits>

#include "common/oracle_table.h"
#include "elementwise_util.h"

namespace {

using ElementwiseSemanticsTest = ElementwiseTest;

constexpr double kInt64Min = -9223372036854775808.0;

// ---- integers wrap ----

TEST_F(ElementwiseSemanticsTest, Int8AdditionWraps)
{
    Tensor a = make({2}, PITH_INT8, {127, -128}), b = make({2}, PITH_INT8, {1, -1});
    Tensor out(pith_add(a.get(), b.get()));
    EXPECT_VALUES(PITH_INT8, out.get(), (std::vector<double>{-128, 127}));
}

TEST_F(ElementwiseSemanticsTest, Uint8SubtractionWraps)
{
    Tensor a = make({1}, PITH_UINT8, {0}), b = make({1}, PITH_UINT8, {1});
    Tensor out(pith_sub(a.get(), b.get()));
    EXPECT_VALUES(PITH_UINT8, out.get(), (std::vector<double>{255}));
}

TEST_F(ElementwiseSemanticsTest, Int64OverflowWraps)
{
    int64_t big[2] = {INT64_MAX, INT64_MIN};
    int64_t n = 2;
    Tensor a(pith_from_data(big, 1, &n, PITH_INT64));
    Tensor one = make({1}, PITH_INT64, {1});
    Tensor sum(pith_add(a.get(), one.get()));
    const int64_t *s = (const int64_t *)pith_data_ptr(sum.get());
    EXPECT_EQ(s[0], INT64_MIN);
    EXPECT_EQ(s[1], INT64_MIN + 1);
    Tensor square(pith_mul(a.get(), a.get()));
    const int64_t *q = (const int64_t *)pith_data_ptr(square.get());
    EXPECT_EQ(q[0], 1);
    EXPECT_EQ(q[1], 0);
    Tensor negated(pith_neg(a.get()));
    EXPECT_EQ(((const int64_t *)pith_data_ptr(negated.get()))[1], INT64_MIN);
    Tensor absolute(pith_abs(a.get()));
    EXPECT_EQ(((const int64_t *)pith_data_ptr(absolute.get()))[1], INT64_MIN);
}

TEST_F(ElementwiseSemanticsTest, Int16MultiplicationWrapsWithoutSignedOverflow)
{
    Tensor a = make({1}, PITH_INT16, {-32768});
    Tensor out(pith_mul(a.get(), a.get()));
    EXPECT_VALUES(PITH_INT16, out.get(), (std::vector<double>{0}));
}

TEST_F(ElementwiseSemanticsTest, MostNegativeDividedByMinusOneWraps)
{
    int64_t v[1] = {INT64_MIN}, n = 1;
    Tensor a(pith_from_data(v, 1, &n, PITH_INT64));
    Tensor m1 = make({1}, PITH_INT64, {-1});
    Tensor q(pith_floor_divide(a.get(), m1.get()));
    Tensor r(pith_remainder(a.get(), m1.get()));
    EXPECT_EQ(*(const int64_t *)pith_data_ptr(q.get()), INT64_MIN);
    EXPECT_EQ(*(const int64_t *)pith_data_ptr(r.get()), 0);
    Tensor a8 = make({1}, PITH_INT8, {-128}), m18 = make({1}, PITH_INT8, {-1});
    Tensor q8(pith_floor_divide(a8.get(), m18.get()));
    EXPECT_VALUES(PITH_INT8, q8.get(), (std::vector<double>{-128}));
}

// ---- integer division ----

std::vector<std::vector<double>> int_division_rows()
{
    std::vector<std::vector<double>> rows;
    for (const auto &cells : pith_test::ReadOracleTable("int_division.csv").rows) {
        std::vector<double> row;
        for (const std::string &cell : cells) row.push_back(std::stod(cell));
        rows.push_back(row);
    }
    return rows;
}

TEST_F(ElementwiseSemanticsTest, IntegerDivisionMatchesTheTableForEverySignedDtype)
{
    auto rows = int_division_rows();
    ASSERT_EQ(rows.size(), 6u);
    for (pith_dtype d : {PITH_INT8, PITH_INT16, PITH_INT32, PITH_INT64}) {
        for (const auto &row : rows) {
            Tensor a = make({1}, d, {row[0]}), b = make({1}, d, {row[1]});
            Tensor q(pith_floor_divide(a.get(), b.get()));
            Tensor r(pith_remainder(a.get(), b.get()));
            Tensor t(pith_div(a.get(), b.get()));
            SCOPED_TRACE(std::string(pith_dtype_name(d)) + " " + std::to_string(row[0]) + " / " + std::to_string(row[1]));
            EXPECT_VALUES(d, q.get(), (std::vector<double>{row[2]}));
            EXPECT_VALUES(d, r.get(), (std::vector<double>{row[3]}));
            EXPECT_EQ(pith_tensor_dtype(t.get()), PITH_FLOAT32);
            EXPECT_VALUES(PITH_FLOAT32, t.get(), (std::vector<double>{row[5]}));
        }
    }
}

TEST_F(ElementwiseSemanticsTest, FloatFloorDivideAndRemainderFollowPython)
{
    auto rows = int_division_rows();
    for (const auto &row : rows) {
        Tensor a = make({1}, PITH_FLOAT64, {row[0]}), b = make({1}, PITH_FLOAT64, {row[1]});
        Tensor q(pith_floor_divide(a.get(), b.get()));
        Tensor r(pith_remainder(a.get(), b.get()));
        EXPECT_VALUES(PITH_FLOAT64, q.get(), (std::vector<double>{row[2]}));
        EXPECT_VALUES(PITH_FLOAT64, r.get(), (std::vector<double>{row[3]}));
    }
}

TEST_F(ElementwiseSemanticsTest, IntegerDivisionByZeroIsAnError)
{
    for (pith_dtype d : {PITH_UINT8, PITH_INT8, PITH_INT16, PITH_INT32, PITH_INT64}) {
        Tensor a = make({3}, d, {1, 2, 3}), b = make({3}, d, {1, 0, 1});
        EXPECT_ERROR(Tensor(pith_floor_divide(a.get(), b.get())), PITH_ERR_VALUE, "floor_divide: ZeroDivisionError");
        EXPECT_ERROR(Tensor(pith_remainder(a.get(), b.get())), PITH_ERR_VALUE, "remainder: ZeroDivisionError");
    }
}

TEST_F(ElementwiseSemanticsTest, BoolFalseDivisorOfAnIntegerIsAZeroDivisor)
{
    Tensor a = make({2}, PITH_INT32, {1, 2}), b = make({2}, PITH_BOOL, {1, 0});
    EXPECT_ERROR(Tensor(pith_floor_divide(a.get(), b.get())), PITH_ERR_VALUE, "ZeroDivisionError");
}

TEST_F(ElementwiseSemanticsTest, FailedInPlaceDivisionLeavesSelfUnchanged)
{
    Tensor self = make({3}, PITH_INT32, {10, 20, 30}), b = make({3}, PITH_INT32, {2, 0, 5});
    int64_t before = pith_version_counter(self.get());
    EXPECT_ERROR(pith_floor_divide_(self.get(), b.get()), PITH_ERR_VALUE, "ZeroDivisionError");
    EXPECT_VALUES(PITH_INT32, self.get(), (std::vector<double>{10, 20, 30}));
    EXPECT_EQ(pith_version_counter(self.get()), before);
}

TEST_F(ElementwiseSemanticsTest, ZeroDivisorIsNoErrorWhenNothingIsComputed)
{
    Tensor a = make({0}, PITH_INT32, {}), b = make({1}, PITH_INT32, {0});
    Tensor out(pith_floor_divide(a.get(), b.get()));
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_EQ(pith_numel(out.get()), 0);
}

TEST_F(ElementwiseSemanticsTest, FloatDivisionByZeroGivesInfinityAndNaN)
{
    Tensor a = make({3}, PITH_FLOAT32, {1, -1, 0}), z = make({3}, PITH_FLOAT32, {0, 0, 0});
    Tensor out(pith_div(a.get(), z.get()));
    EXPECT_VALUES(PITH_FLOAT32, out.get(), (std::vector<double>{INFINITY, -INFINITY, NAN}));
    Tensor ints = make({2}, PITH_INT32, {1, 0}), izero = make({2}, PITH_INT32, {0, 0});
    Tensor true_div(pith_div(ints.get(), izero.get()));
    EXPECT_VALUES(PITH_FLOAT32, true_div.get(), (std::vector<double>{INFINITY, NAN}));
}

// ---- NaN ----

TEST_F(ElementwiseSemanticsTest, MaximumAndMinimumPropagateNaN)
{
    Tensor a = make({3}, PITH_FLOAT32, {NAN, 1, 2}), b = make({3}, PITH_FLOAT32, {1, NAN, 3});
    Tensor mx(pith_maximum(a.get(), b.get())), mn(pith_minimum(a.get(), b.get()));
    EXPECT_VALUES(PITH_FLOAT32, mx.get(), (std::vector<double>{NAN, NAN, 3}));
    EXPECT_VALUES(PITH_FLOAT32, mn.get(), (std::vector<double>{NAN, NAN, 2}));
}

TEST_F(ElementwiseSemanticsTest, ComparisonsWithNaNAreFalseExceptNe)
{
    Tensor a = make({1}, PITH_FLOAT64, {NAN});
    Tensor eq(pith_eq(a.get(), a.get())), ne(pith_ne(a.get(), a.get())), le(pith_le(a.get(), a.get()));
    EXPECT_VALUES(PITH_BOOL, eq.get(), (std::vector<double>{0}));
    EXPECT_VALUES(PITH_BOOL, ne.get(), (std::vector<double>{1}));
    EXPECT_VALUES(PITH_BOOL, le.get(), (std::vector<double>{0}));
}

TEST_F(ElementwiseSemanticsTest, LogicalOpsReadNaNAsTrue)
{
    Tensor a = make({2}, PITH_FLOAT32, {NAN, 0});
    Tensor out(pith_logical_not(a.get()));
    EXPECT_VALUES(PITH_BOOL, out.get(), (std::vector<double>{0, 1}));
}

// PyTorch converts both operands to their common dtype before testing them: a 0-dim int16
// 256 beside a uint8 tensor is uint8 0, and a 0-dim float64 1e-10 beside a float16 tensor
// underflows to 0.
TEST_F(ElementwiseSemanticsTest, LogicalOpsTestTheOperandsInTheirCommonDtype)
{
    Tensor u8 = make({2}, PITH_UINT8, {1, 0}), wraps = make_scalar(PITH_INT16, 256);
    Tensor u8_and(pith_logical_and(u8.get(), wraps.get())), u8_or(pith_logical_or(u8.get(), wraps.get()));
    EXPECT_VALUES(PITH_BOOL, u8_and.get(), (std::vector<double>{0, 0}));
    EXPECT_VALUES(PITH_BOOL, u8_or.get(), (std::vector<double>{1, 0}));
    Tensor half = make({2}, PITH_FLOAT16, {1, 0}), underflows = make_scalar(PITH_FLOAT64, 1e-10);
    Tensor half_and(pith_logical_and(half.get(), underflows.get()));
    Tensor half_or(pith_logical_or(underflows.get(), half.get()));
    EXPECT_VALUES(PITH_BOOL, half_and.get(), (std::vector<double>{0, 0}));
    EXPECT_VALUES(PITH_BOOL, half_or.get(), (std::vector<double>{1, 0}));
}

TEST_F(ElementwiseSemanticsTest, SignOfNaNIsZero)
{
    Tensor a = make({3}, PITH_FLOAT32, {NAN, -2, 0});
    Tensor out(pith_sign(a.get()));
    EXPECT_VALUES(PITH_FLOAT32, out.get(), (std::vector<double>{0, -1, 0}));
}

// ---- errors of particular ops ----

TEST_F(ElementwiseSemanticsTest, SubtractingBoolsSuggestsTheRightOperator)
{
    Tensor b = make({2}, PITH_BOOL, {1, 0}), i = make({2}, PITH_INT32, {1, 2});
    EXPECT_ERROR(Tensor(pith_sub(b.get(), b.get())), PITH_ERR_TYPE, "with two bool tensors is not supported");
    EXPECT_ERROR(Tensor(pith_sub(i.get(), b.get())), PITH_ERR_TYPE, "with a bool tensor is not supported");
}

TEST_F(ElementwiseSemanticsTest, NegatingABoolSuggestsLogicalNot)
{
    Tensor b = make({2}, PITH_BOOL, {1, 0});
    EXPECT_ERROR(Tensor(pith_neg(b.get())), PITH_ERR_TYPE, "use the `~` or `logical_not()` operator instead");
}

TEST_F(ElementwiseSemanticsTest, BitwiseOpsRejectFloats)
{
    Tensor f = make({2}, PITH_FLOAT32, {1, 0}), i = make({2}, PITH_INT32, {1, 2});
    EXPECT_ERROR(Tensor(pith_bitwise_xor(i.get(), f.get())), PITH_ERR_TYPE, "bitwise_xor: not implemented for dtype float32");
    EXPECT_ERROR(Tensor(pith_bitwise_not(f.get())), PITH_ERR_TYPE, "bitwise_not");
}

TEST_F(ElementwiseSemanticsTest, AbsAndReluRejectBool)
{
    Tensor b = make({2}, PITH_BOOL, {1, 0});
    EXPECT_ERROR(Tensor(pith_abs(b.get())), PITH_ERR_TYPE, "abs: not implemented for dtype bool");
    EXPECT_ERROR(Tensor(pith_relu(b.get())), PITH_ERR_TYPE, "relu: not implemented for dtype bool");
}

// ---- alpha ----

TEST_F(ElementwiseSemanticsTest, AddWithIntegerAlpha)
{
    Tensor a = make({3}, PITH_INT32, {1, 2, 3}), b = make({3}, PITH_INT32, {10, 20, 30});
    Tensor out = call_boxed("add.Tensor", {arg_tensor(a.get()), arg_tensor(b.get()), arg_int(-2)});
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_VALUES(PITH_INT32, out.get(), (std::vector<double>{-19, -38, -57}));
}

TEST_F(ElementwiseSemanticsTest, SubWithFloatAlpha)
{
    Tensor a = make({2}, PITH_FLOAT16, {1, 2}), b = make({2}, PITH_FLOAT16, {4, 8});
    Tensor out = call_boxed("sub", {arg_tensor(a.get()), arg_tensor(b.get()), arg_double(0.25)});
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_VALUES(PITH_FLOAT16, out.get(), (std::vector<double>{0, 0}));
}

TEST_F(ElementwiseSemanticsTest, FloatAlphaWithIntegerResultIsAnError)
{
    Tensor a = make({2}, PITH_INT64, {1, 2});
    EXPECT_ERROR(call_boxed("add", {arg_tensor(a.get()), arg_tensor(a.get()), arg_double(0.5)}),
                 PITH_ERR_TYPE, "For integral input tensors, argument alpha must not be a floating point number.");
}

TEST_F(ElementwiseSemanticsTest, BoolAlphaOnlyForBoolResults)
{
    Tensor a = make({2}, PITH_INT64, {1, 2});
    EXPECT_ERROR(call_boxed("add", {arg_tensor(a.get()), arg_tensor(a.get()), arg_bool(true)}),
                 PITH_ERR_TYPE, "Boolean alpha only supported for Boolean results.");
    Tensor f = make({2}, PITH_BOOL, {0, 0}), t = make({2}, PITH_BOOL, {1, 0});
    Tensor out = call_boxed("add", {arg_tensor(f.get()), arg_tensor(t.get()), arg_bool(false)});
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_VALUES(PITH_BOOL, out.get(), (std::vector<double>{0, 0}));
}

TEST_F(ElementwiseSemanticsTest, AlphaThatDoesNotFitTheDtypeIsAnError)
{
    Tensor a = make({2}, PITH_INT8, {1, 2});
    EXPECT_ERROR(call_boxed("add", {arg_tensor(a.get()), arg_tensor(a.get()), arg_int(1000)}),
                 PITH_ERR_VALUE, "cannot be converted to type int8");
}

TEST_F(ElementwiseSemanticsTest, AlphaInPlaceAndOut)
{
    Tensor a = make({2}, PITH_FLOAT32, {1, 2}), b = make({2}, PITH_FLOAT32, {1, 1});
    Tensor r = call_boxed("add_.Tensor", {arg_tensor(a.get()), arg_tensor(b.get()), arg_int(3)});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(r.get(), a.get());
    EXPECT_VALUES(PITH_FLOAT32, a.get(), (std::vector<double>{4, 5}));
    Tensor out = make({0}, PITH_FLOAT64, {});
    Tensor r2 = call_boxed("sub.out", {arg_tensor(a.get()), arg_tensor(b.get()), arg_double(2), arg_tensor(out.get())});
    ASSERT_NE(r2, nullptr) << pith_last_error();
    EXPECT_VALUES(PITH_FLOAT64, out.get(), (std::vector<double>{2, 3}));
}

// ---- pow ----

TEST_F(ElementwiseSemanticsTest, IntegerTensorPowersWithNegativeExponentsFollowPowi)
{
    Tensor base = make({4}, PITH_INT32, {2, 1, -1, -1}), e = make({4}, PITH_INT32, {-1, -5, -3, -2});
    Tensor out(pith_pow(base.get(), e.get()));
    EXPECT_VALUES(PITH_INT32, out.get(), (std::vector<double>{0, 1, -1, 1}));
}

TEST_F(ElementwiseSemanticsTest, NegativePythonIntExponentOfAnIntegerIsAnError)
{
    Tensor base = make({2}, PITH_INT64, {2, 3});
    Tensor e = make_wrapped(PITH_INT64, -2);
    EXPECT_ERROR(Tensor(pith_pow(base.get(), e.get())), PITH_ERR_VALUE, "Integers to negative integer powers are not allowed.");
}

TEST_F(ElementwiseSemanticsTest, IntegerPowerWraps)
{
    Tensor base = make({2}, PITH_INT64, {3, 2}), e = make({2}, PITH_INT64, {41, 64});
    Tensor out(pith_pow(base.get(), e.get()));
    const int64_t *p = (const int64_t *)pith_data_ptr(out.get());
    uint64_t want = 1;
    for (int i = 0; i < 41; i++) want *= 3;
    EXPECT_EQ((uint64_t)p[0], want);
    EXPECT_EQ(p[1], 0);
}

TEST_F(ElementwiseSemanticsTest, Float16ExpIsComputedInFloat16)
{
    Tensor a = make({2}, PITH_FLOAT16, {0, 1});
    Tensor out(pith_exp(a.get()));
    ASSERT_EQ(pith_tensor_dtype(out.get()), PITH_FLOAT16);
    EXPECT_VALUES(PITH_FLOAT16, out.get(), (std::vector<double>{1, std::exp(1.0)}));
}

// ---- gelu ----

TEST_F(ElementwiseSemanticsTest, GeluExactAndTanh)
{
    std::vector<double> x = {-3, -1, -0.5, 0, 0.5, 1, 3};
    Tensor t = make({7}, PITH_FLOAT64, x);
    Tensor exact(pith_gelu(t.get(), false)), approx(pith_gelu(t.get(), true));
    std::vector<double> we, wt;
    for (double v : x) {
        we.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
        wt.push_back(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
    }
    EXPECT_VALUES(PITH_FLOAT64, exact.get(), we);
    EXPECT_VALUES(PITH_FLOAT64, approx.get(), wt);
}

TEST_F(ElementwiseSemanticsTest, GeluOfAnUnknownApproximationIsAValueError)
{
    Tensor t = make({1}, PITH_FLOAT32, {1});
    EXPECT_ERROR(call_boxed("gelu", {arg_tensor(t.get()), arg_string("sigmoid")}), PITH_ERR_VALUE,
                 "approximate argument must be either none or tanh");
}

TEST_F(ElementwiseSemanticsTest, GeluOfIntegersIsATypeError)
{
    Tensor t = make({1}, PITH_INT32, {1});
    EXPECT_ERROR(Tensor(pith_gelu(t.get(), false)), PITH_ERR_TYPE, "gelu: not implemented for dtype int32");
}

TEST_F(ElementwiseSemanticsTest, GeluOutAndInPlace)
{
    Tensor t = make({2}, PITH_FLOAT32, {1, -1});
    Tensor out = make({0}, PITH_FLOAT32, {});
    Tensor r = call_boxed("gelu.out", {arg_tensor(t.get()), arg_string("tanh"), arg_tensor(out.get())});
    ASSERT_NE(r, nullptr) << pith_last_error();
    Tensor r2 = call_boxed("gelu_", {arg_tensor(t.get()), arg_string("tanh")});
    ASSERT_NE(r2, nullptr) << pith_last_error();
    EXPECT_VALUES(PITH_FLOAT32, t.get(), values_of(out.get()));
    double v = 0;
    pith_item_at(out.get(), 0, &v);
    EXPECT_NEAR(v, 0.5 * (1 + std::tanh(std::sqrt(2 / M_PI) * 1.044715)), 1e-6);
}

// ---- clamp ----

TEST_F(ElementwiseSemanticsTest, ClampWithBothBoundsKeepsIntegerDtype)
{
    Tensor t = make({5}, PITH_INT32, {-5, -1, 0, 3, 9});
    double lo = -1, hi = 3;
    Tensor out(pith_clamp(t.get(), &lo, &hi));
    EXPECT_EQ(pith_tensor_dtype(out.get()), PITH_INT32);
    EXPECT_VALUES(PITH_INT32, out.get(), (std::vector<double>{-1, -1, 0, 3, 3}));
}

TEST_F(ElementwiseSemanticsTest, ClampWithOneBound)
{
    Tensor t = make({3}, PITH_FLOAT32, {-2, 0, 2});
    double lo = 0;
    Tensor low(pith_clamp(t.get(), &lo, nullptr)), high(pith_clamp(t.get(), nullptr, &lo));
    EXPECT_VALUES(PITH_FLOAT32, low.get(), (std::vector<double>{0, 0, 2}));
    EXPECT_VALUES(PITH_FLOAT32, high.get(), (std::vector<double>{-2, 0, 0}));
}

TEST_F(ElementwiseSemanticsTest, ClampWithoutBoundsIsAnError)
{
    Tensor t = make({1}, PITH_FLOAT32, {1});
    EXPECT_ERROR(Tensor(pith_clamp(t.get(), nullptr, nullptr)), PITH_ERR_VALUE, "At least one of 'min' or 'max' must not be None");
}

TEST_F(ElementwiseSemanticsTest, ClampMinAboveMaxGivesMax)
{
    Tensor t = make({3}, PITH_FLOAT64, {-1, 5, 10});
    double lo = 6, hi = 2;
    Tensor out(pith_clamp(t.get(), &lo, &hi));
    EXPECT_VALUES(PITH_FLOAT64, out.get(), (std::vector<double>{2, 2, 2}));
}

TEST_F(ElementwiseSemanticsTest, ClampPropagatesNaN)
{
    Tensor t = make({2}, PITH_FLOAT32, {NAN, 1});
    double lo = 0, hi = 2, nan = NAN;
    Tensor out(pith_clamp(t.get(), &lo, &hi));
    EXPECT_VALUES(PITH_FLOAT32, out.get(), (std::vector<double>{NAN, 1}));
    Tensor nan_bound(pith_clamp(t.get(), &nan, nullptr));
    EXPECT_VALUES(PITH_FLOAT32, nan_bound.get(), (std::vector<double>{NAN, NAN}));
}

TEST_F(ElementwiseSemanticsTest, ClampOfAnIntegerTensorToAFloatPromotes)
{
    Tensor t = make({3}, PITH_INT64, {0, 1, 2});
    Tensor out = call_boxed("clamp", {arg_tensor(t.get()), arg_double(0.5), arg_none()});
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(out.get()), PITH_FLOAT32);
    EXPECT_VALUES(PITH_FLOAT32, out.get(), (std::vector<double>{0.5, 1, 2}));
    EXPECT_ERROR(call_boxed("clamp_", {arg_tensor(t.get()), arg_double(0.5), arg_none()}), PITH_ERR_TYPE,
                 "result type float32 can't be cast to the desired output type int64");
}

TEST_F(ElementwiseSemanticsTest, ClampInPlaceBumpsTheVersion)
{
    Tensor t = make({3}, PITH_INT16, {-7, 0, 7});
    int64_t before = pith_version_counter(t.get());
    Tensor r = call_boxed("clamp_", {arg_tensor(t.get()), arg_int(-2), arg_int(2)});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_VALUES(PITH_INT16, t.get(), (std::vector<double>{-2, 0, 2}));
    EXPECT_EQ(pith_version_counter(t.get()), before + 1);
}

TEST_F(ElementwiseSemanticsTest, ClampBoundThatDoesNotFitIsAnError)
{
    Tensor t = make({1}, PITH_INT8, {1});
    EXPECT_ERROR(call_boxed("clamp", {arg_tensor(t.get()), arg_int(1000), arg_none()}), PITH_ERR_VALUE,
                 "cannot be converted to type int8");
}

TEST_F(ElementwiseSemanticsTest, ClampOfBoolIsNotImplemented)
{
    Tensor t = make({1}, PITH_BOOL, {1});
    EXPECT_ERROR(call_boxed("clamp", {arg_tensor(t.get()), arg_bool(false), arg_none()}), PITH_ERR_TYPE,
                 "clamp: not implemented for dtype bool");
}

TEST_F(ElementwiseSemanticsTest, ClampOnMeta)
{
    Tensor t = make_meta({2, 3}, PITH_INT32);
    double lo = 0.5;
    Tensor out(pith_clamp(t.get(), &lo, nullptr));
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(out.get()), PITH_META);
    EXPECT_EQ(pith_tensor_dtype(out.get()), PITH_FLOAT32);
}

// ---- where ----

TEST_F(ElementwiseSemanticsTest, WhereBroadcastsAndPromotes)
{
    Tensor cond = make({2, 1}, PITH_BOOL, {1, 0});
    Tensor a = make({3}, PITH_INT32, {1, 2, 3});
    Tensor b = make_scalar(PITH_FLOAT64, -0.5);
    Tensor out(pith_where(cond.get(), a.get(), b.get()));
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(out.get()), PITH_FLOAT64);
    EXPECT_EQ(sizes_of(out.get()), (std::vector<int64_t>{2, 3}));
    EXPECT_VALUES(PITH_FLOAT64, out.get(), (std::vector<double>{1, 2, 3, -0.5, -0.5, -0.5}));
}

TEST_F(ElementwiseSemanticsTest, WhereAcceptsAUint8Condition)
{
    Tensor cond = make({3}, PITH_UINT8, {2, 0, 1});
    Tensor a = make({3}, PITH_FLOAT16, {1, 2, 3}), b = make({3}, PITH_FLOAT16, {-1, -2, -3});
    Tensor out(pith_where(cond.get(), a.get(), b.get()));
    EXPECT_VALUES(PITH_FLOAT16, out.get(), (std::vector<double>{1, -2, 3}));
}

TEST_F(ElementwiseSemanticsTest, WhereWithAFloatConditionIsATypeError)
{
    Tensor cond = make({1}, PITH_FLOAT32, {1});
    EXPECT_ERROR(Tensor(pith_where(cond.get(), cond.get(), cond.get())), PITH_ERR_TYPE,
                 "where: expected condition to be a boolean tensor, but got a tensor with dtype float32");
}

TEST_F(ElementwiseSemanticsTest, WhereShapeMismatchNamesTheSizes)
{
    Tensor cond = make({2}, PITH_BOOL, {1, 0});
    Tensor a = make({3}, PITH_INT32, {1, 2, 3});
    EXPECT_ERROR(Tensor(pith_where(cond.get(), a.get(), a.get())), PITH_ERR_VALUE,
                 "the size of tensor a (2) must match the size of tensor b (3)");
}

TEST_F(ElementwiseSemanticsTest, WhereOnMetaAndOnNonContiguousInputs)
{
    Tensor cond = make_meta({4, 1}, PITH_BOOL), a = make_meta({5}, PITH_INT8);
    Tensor out(pith_where(cond.get(), a.get(), a.get()));
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(out.get()), PITH_META);
    EXPECT_EQ(sizes_of(out.get()), (std::vector<int64_t>{4, 5}));
    Tensor c2 = make_strided({2, 2}, {1, 2}, PITH_BOOL, {1, 0, 0, 1});
    Tensor x = make_strided({2, 2}, {1, 2}, PITH_INT64, {1, 2, 3, 4});
    Tensor y = make({2, 2}, PITH_INT64, {-1, -2, -3, -4});
    Tensor o2(pith_where(c2.get(), x.get(), y.get()));
    EXPECT_VALUES(PITH_INT64, o2.get(), (std::vector<double>{1, -2, -3, 4}));
}

// ---- copies ----

TEST_F(ElementwiseSemanticsTest, CopyBroadcastsAndConverts)
{
    Tensor dst = make({2, 3}, PITH_INT16, std::vector<double>(6, 0));
    Tensor src = make({3}, PITH_FLOAT64, {1.9, -2.9, 300.5});
    int64_t before = pith_version_counter(dst.get());
    ASSERT_EQ(pith_copy_(dst.get(), src.get()), PITH_OK);
    EXPECT_VALUES(PITH_INT16, dst.get(), (std::vector<double>{1, -2, 300, 1, -2, 300}));
    EXPECT_EQ(pith_version_counter(dst.get()), before + 1);
}

TEST_F(ElementwiseSemanticsTest, CopyFromALargerShapeIsAnError)
{
    Tensor dst = make({3}, PITH_FLOAT32, {0, 0, 0});
    Tensor src = make({2, 3}, PITH_FLOAT32, std::vector<double>(6, 1));
    EXPECT_ERROR(pith_copy_(dst.get(), src.get()), PITH_ERR_VALUE,
                 "copy_: output with shape [3] doesn't match the broadcast shape [2, 3]");
}

TEST_F(ElementwiseSemanticsTest, CopyIntoATransposedDestination)
{
    Tensor dst = make_strided({2, 3}, {1, 2}, PITH_FLOAT32, std::vector<double>(6, 0));
    Tensor src = make({2, 3}, PITH_INT32, {1, 2, 3, 4, 5, 6});
    ASSERT_EQ(pith_copy_(dst.get(), src.get()), PITH_OK);
    EXPECT_VALUES(PITH_FLOAT32, dst.get(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST_F(ElementwiseSemanticsTest, CopyFromItsOwnTranspose)
{
    Tensor t = make({2, 2}, PITH_INT32, {1, 2, 3, 4});
    Tensor tt(pith_transpose(t.get(), 0, 1));
    ASSERT_EQ(pith_copy_(t.get(), tt.get()), PITH_OK);
    EXPECT_VALUES(PITH_INT32, t.get(), (std::vector<double>{1, 3, 2, 4}));
}

TEST_F(ElementwiseSemanticsTest, CopyIntoAnExpandedSelfIsAnError)
{
    Tensor dst = make_strided({3}, {0}, PITH_FLOAT32, {0, 0, 0});
    Tensor src = make({3}, PITH_FLOAT32, {1, 2, 3});
    EXPECT_ERROR(pith_copy_(dst.get(), src.get()), PITH_ERR_VALUE, "refers to a single memory location");
}

TEST_F(ElementwiseSemanticsTest, GeluClampAndWhereOnEmptyAndZeroDimInputs)
{
    Tensor empty = make({0, 2}, PITH_FLOAT32, {});
    Tensor scalar = make_scalar(PITH_FLOAT32, -1.5);
    double lo = -1;
    Tensor g0(pith_gelu(empty.get(), false)), c0(pith_clamp(empty.get(), &lo, nullptr));
    EXPECT_EQ(sizes_of(g0.get()), (std::vector<int64_t>{0, 2}));
    EXPECT_EQ(sizes_of(c0.get()), (std::vector<int64_t>{0, 2}));
    Tensor c1(pith_clamp(scalar.get(), &lo, nullptr));
    EXPECT_EQ(pith_ndim(c1.get()), 0);
    EXPECT_VALUES(PITH_FLOAT32, c1.get(), (std::vector<double>{-1}));
    Tensor cond = make({0, 1}, PITH_BOOL, {});
    Tensor w(pith_where(cond.get(), scalar.get(), empty.get()));
    EXPECT_EQ(sizes_of(w.get()), (std::vector<int64_t>{0, 2}));
    Tensor yes = make_scalar(PITH_BOOL, 1);
    Tensor w0(pith_where(yes.get(), scalar.get(), scalar.get()));
    EXPECT_EQ(pith_ndim(w0.get()), 0);
    EXPECT_VALUES(PITH_FLOAT32, w0.get(), (std::vector<double>{-1.5}));
}

TEST_F(ElementwiseSemanticsTest, CopyMetaValidatesAndBumps)
{
    Tensor dst = make_meta({2, 3}, PITH_FLOAT32), src = make_meta({3}, PITH_INT8);
    int64_t before = pith_version_counter(dst.get());
    ASSERT_EQ(pith_copy_(dst.get(), src.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(pith_version_counter(dst.get()), before + 1);
    Tensor cpu = make({2, 3}, PITH_FLOAT32, std::vector<double>(6, 0));
    EXPECT_ERROR(pith_copy_(cpu.get(), src.get()), PITH_ERR_VALUE, "same device");
}

// Every pair of dtypes: a value converts as C would for exact values, with bool as x != 0.
TEST_F(ElementwiseSemanticsTest, EveryDtypeConvertsToEveryDtype)
{
    for (pith_dtype from : kAllDtypes)
        for (pith_dtype to : kAllDtypes) {
            std::vector<double> v = {0, 1, 2, 5, 100, 1};
            if (from == PITH_BOOL) v = {0, 1, 1, 0, 1, 1};
            if (from != PITH_UINT8 && from != PITH_BOOL) v[5] = -3;
            if (is_float(from)) v[2] = 2.75;
            Tensor src = make({6}, from, v);
            Tensor out(pith_to_dtype(src.get(), to));
            ASSERT_NE(out, nullptr) << pith_last_error();
            EXPECT_EQ(pith_tensor_dtype(out.get()), to);
            std::vector<double> want;
            for (double x : v) {
                double in = test_round(from, x);
                if (to == PITH_BOOL) want.push_back(in != 0);
                else if (is_int(to)) want.push_back((double)wrap_to(to, (uint64_t)(int64_t)in));
                else want.push_back(test_round(to, in));
            }
            SCOPED_TRACE(std::string(pith_dtype_name(from)) + " -> " + pith_dtype_name(to));
            EXPECT_VALUES(to, out.get(), want);
        }
}

TEST_F(ElementwiseSemanticsTest, FloatToIntegerConversionIsDefinedForEveryValue)
{
    Tensor src = make({7}, PITH_FLOAT64, {NAN, INFINITY, -INFINITY, 1e30, -1e30, 300, -1});
    Tensor i32(pith_to_dtype(src.get(), PITH_INT32)), u8(pith_to_dtype(src.get(), PITH_UINT8));
    Tensor i64(pith_to_dtype(src.get(), PITH_INT64)), b(pith_to_dtype(src.get(), PITH_BOOL));
    EXPECT_VALUES(PITH_INT32, i32.get(), (std::vector<double>{0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 300, -1}));
    EXPECT_VALUES(PITH_UINT8, u8.get(), (std::vector<double>{0, 255, 0, 255, 0, 44, 255}));
    EXPECT_VALUES(PITH_INT64, i64.get(), (std::vector<double>{0, 9223372036854775807.0, kInt64Min, 9223372036854775807.0, kInt64Min, 300, -1}));
    EXPECT_VALUES(PITH_BOOL, b.get(), (std::vector<double>{1, 1, 1, 1, 1, 1, 1}));
}

TEST_F(ElementwiseSemanticsTest, ToTheSameDtypeReturnsSelf)
{
    Tensor t = make({2}, PITH_FLOAT32, {1, 2});
    Tensor same(pith_to_dtype(t.get(), PITH_FLOAT32));
    EXPECT_EQ(same.get(), t.get());
    Tensor copied = call_boxed("to.dtype", {arg_tensor(t.get()), arg_dtype(PITH_FLOAT32), arg_bool(false), arg_bool(true)});
    ASSERT_NE(copied, nullptr) << pith_last_error();
    EXPECT_NE(copied.get(), t.get());
    EXPECT_FALSE(pith_shares_storage(copied.get(), t.get()));
    EXPECT_VALUES(PITH_FLOAT32, copied.get(), (std::vector<double>{1, 2}));
}

TEST_F(ElementwiseSemanticsTest, ToAnInvalidDtypeIsATypeError)
{
    Tensor t = make({2}, PITH_FLOAT32, {1, 2});
    EXPECT_ERROR(Tensor(pith_to_dtype(t.get(), (pith_dtype)77)), PITH_ERR_TYPE, "dtype");
}

TEST_F(ElementwiseSemanticsTest, ToOnMetaGivesAMetaTensor)
{
    Tensor t = make_meta({2, 3}, PITH_FLOAT32);
    Tensor out(pith_to_dtype(t.get(), PITH_INT8));
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(out.get()), PITH_META);
    EXPECT_EQ(pith_tensor_dtype(out.get()), PITH_INT8);
    EXPECT_EQ(sizes_of(out.get()), (std::vector<int64_t>{2, 3}));
}

TEST_F(ElementwiseSemanticsTest, CloneIsAContiguousCopy)
{
    Tensor t = make_strided({2, 3}, {1, 2}, PITH_INT8, {1, 2, 3, 4, 5, 6});
    Tensor c(pith_clone(t.get()));
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(pith_is_contiguous(c.get()));
    EXPECT_FALSE(pith_shares_storage(c.get(), t.get()));
    EXPECT_VALUES(PITH_INT8, c.get(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST_F(ElementwiseSemanticsTest, ContiguousReturnsSelfOrACopy)
{
    Tensor t = make({2, 3}, PITH_FLOAT32, {1, 2, 3, 4, 5, 6});
    Tensor same(pith_contiguous(t.get()));
    EXPECT_EQ(same.get(), t.get());
    Tensor tt(pith_transpose(t.get(), 0, 1));
    Tensor c(pith_contiguous(tt.get()));
    EXPECT_NE(c.get(), tt.get());
    EXPECT_TRUE(pith_is_contiguous(c.get()));
    EXPECT_VALUES(PITH_FLOAT32, c.get(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

} // namespace
