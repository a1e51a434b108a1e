// Factories: empty, empty_strided, zeros, ones, full (through boxed calls: their public C
// functions belong to core), arange, linspace and eye. dtype inference, PyTorch's sizes and
// messages, and the meta device.
#include <cmath>
#include <functional>

#include "views_test_util.h"

namespace pith_e_test {
namespace {

class FactoriesTest : public KernelFixture {};

using Values_ = std::vector<double>;

/* Calls op `name` boxed with the arguments `push` puts on the stack; returns its tensor
 * (nullptr on failure, with the error kept). */
Tensor Boxed(const char *name, const std::function<void(pith_stack *)> &push)
{
    const pith_op *op = pith_op_find(name);
    EXPECT_NE(op, nullptr) << name;
    pith_stack *s = pith_stack_new();
    push(s);
    Tensor out;
    if (pith_call_boxed(op, s) == PITH_OK)
        out.reset(pith_stack_get_tensor(s, pith_stack_size(s) - 1));
    pith_stack_free(s);
    return out;
}

void PushSizes(pith_stack *s, const Shape &sizes)
{
    pith_stack_push_int_list(s, sizes.data(), sizes.size());
}

// ---- empty, empty_strided, zeros, ones, full ----

TEST_F(FactoriesTest, EmptyDefaultsToFloat32OnCpu)
{
    Tensor t = Boxed("empty", [](pith_stack *s) { PushSizes(s, {2, 3}); });
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(t.get()), (Shape{2, 3}));
    EXPECT_EQ(pith_tensor_dtype(t.get()), PITH_FLOAT32);
    EXPECT_EQ(pith_tensor_device(t.get()), PITH_CPU);
    EXPECT_TRUE(pith_is_contiguous(t.get()));
}

TEST_F(FactoriesTest, EmptyOnMetaHasNoData)
{
    Tensor t = Boxed("empty", [](pith_stack *s) {
        PushSizes(s, {4});
        pith_stack_push_dtype(s, PITH_INT16);
        pith_stack_push_device(s, PITH_META);
    });
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(t.get()), PITH_META);
    EXPECT_EQ(pith_tensor_dtype(t.get()), PITH_INT16);
    EXPECT_EQ(pith_data_ptr(t.get()), nullptr);
}

TEST_F(FactoriesTest, EmptyStridedKeepsStrides)
{
    Tensor t = Boxed("empty_strided", [](pith_stack *s) {
        PushSizes(s, {2, 3});
        PushSizes(s, {1, 2});
    });
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(Strides(t.get()), (Shape{1, 2}));
    Tensor bad = Boxed("empty_strided", [](pith_stack *s) {
        PushSizes(s, {2, 3});
        PushSizes(s, {1});
    });
    EXPECT_EQ(bad, nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "mismatch in length of strides and shape"));
}

TEST_F(FactoriesTest, ZerosAndOnesForEveryDtype)
{
    for (int d = 0; d < PITH_NUM_DTYPES; d++) {
        Tensor z = Boxed("zeros", [d](pith_stack *s) {
            PushSizes(s, {3});
            pith_stack_push_dtype(s, (pith_dtype)d);
        });
        Tensor o = Boxed("ones", [d](pith_stack *s) {
            PushSizes(s, {3});
            pith_stack_push_dtype(s, (pith_dtype)d);
        });
        ASSERT_TRUE(z && o) << pith_last_error();
        EXPECT_EQ(pith_tensor_dtype(o.get()), (pith_dtype)d);
        EXPECT_EQ(Values(z.get()), (Values_{0, 0, 0})) << d;
        EXPECT_EQ(Values(o.get()), (Values_{1, 1, 1})) << d;
    }
}

TEST_F(FactoriesTest, LargeFillUsesEveryElement)
{
    Tensor o = Boxed("ones", [](pith_stack *s) {
        PushSizes(s, {100003});
        pith_stack_push_dtype(s, PITH_FLOAT64);
    });
    ASSERT_NE(o, nullptr) << pith_last_error();
    const double *p = static_cast<const double *>(pith_data_ptr(o.get()));
    int64_t ones = 0;
    for (int64_t i = 0; i < 100003; i++)
        ones += p[i] == 1.0;
    EXPECT_EQ(ones, 100003);
}

TEST_F(FactoriesTest, FullInfersDtypeFromTheFillValue)
{
    Tensor b = Boxed("full", [](pith_stack *s) {
        PushSizes(s, {2});
        pith_stack_push_bool(s, true);
    });
    Tensor i = Boxed("full", [](pith_stack *s) {
        PushSizes(s, {2});
        pith_stack_push_int(s, 7);
    });
    Tensor f = Boxed("full", [](pith_stack *s) {
        PushSizes(s, {2});
        pith_stack_push_double(s, 2.5);
    });
    ASSERT_TRUE(b && i && f) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(b.get()), PITH_BOOL);
    EXPECT_EQ(pith_tensor_dtype(i.get()), PITH_INT64);
    EXPECT_EQ(pith_tensor_dtype(f.get()), PITH_FLOAT32);
    EXPECT_EQ(Values(b.get()), (Values_{1, 1}));
    EXPECT_EQ(Values(i.get()), (Values_{7, 7}));
    EXPECT_EQ(Values(f.get()), (Values_{2.5, 2.5}));
}

Tensor FullOf(pith_dtype dtype, const std::function<void(pith_stack *)> &value)
{
    return Boxed("full", [&](pith_stack *s) {
        PushSizes(s, {2});
        value(s);
        pith_stack_push_dtype(s, dtype);
    });
}

TEST_F(FactoriesTest, FullConvertsLikeScalarTo)
{
    Tensor wrap = FullOf(PITH_UINT8, [](pith_stack *s) { pith_stack_push_int(s, -1); });
    Tensor trunc = FullOf(PITH_INT64, [](pith_stack *s) { pith_stack_push_double(s, -1.75); });
    Tensor inf = FullOf(PITH_FLOAT16, [](pith_stack *s) { pith_stack_push_double(s, INFINITY); });
    ASSERT_TRUE(wrap && trunc && inf) << pith_last_error();
    EXPECT_EQ(Values(wrap.get()), (Values_{255, 255}));
    EXPECT_EQ(Values(trunc.get()), (Values_{-1, -1}));
    EXPECT_EQ(At(inf.get(), 0), INFINITY);
}

TEST_F(FactoriesTest, FullValueThatOverflowsTheDtypeIsAnError)
{
    EXPECT_EQ(FullOf(PITH_UINT8, [](pith_stack *s) { pith_stack_push_int(s, 300); }), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "value cannot be converted to type uint8_t without overflow"));
    EXPECT_EQ(FullOf(PITH_UINT8, [](pith_stack *s) { pith_stack_push_int(s, -256); }), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "uint8_t without overflow"));
    EXPECT_EQ(FullOf(PITH_INT8, [](pith_stack *s) { pith_stack_push_double(s, 128.0); }), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "int8_t without overflow"));
    EXPECT_EQ(FullOf(PITH_BOOL, [](pith_stack *s) { pith_stack_push_int(s, 2); }), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "type bool without overflow"));
    EXPECT_EQ(FullOf(PITH_FLOAT16, [](pith_stack *s) { pith_stack_push_double(s, 1e5); }), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "at::Half without overflow"));
    EXPECT_EQ(FullOf(PITH_INT32, [](pith_stack *s) { pith_stack_push_double(s, NAN); }), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "type int without overflow"));
}

TEST_F(FactoriesTest, FactoryErrors)
{
    Tensor neg = Boxed("zeros", [](pith_stack *s) { PushSizes(s, {2, -1}); });
    EXPECT_EQ(neg, nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative"));
    Tensor dtype = Boxed("zeros", [](pith_stack *s) {
        PushSizes(s, {2});
        pith_stack_push_int(s, 42); // not a dtype value
    });
    EXPECT_EQ(dtype, nullptr);
    EXPECT_NE(pith_last_status(), PITH_OK);
    pith_clear_error();
    EXPECT_EQ(pith_arange(0, 3, 1, (pith_dtype)42), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "arange: invalid dtype 42"));
}

TEST_F(FactoriesTest, ZerosOnMetaValidatesToo)
{
    Tensor ok = Boxed("zeros", [](pith_stack *s) {
        PushSizes(s, {5, 5});
        pith_stack_push_none(s);
        pith_stack_push_device(s, PITH_META);
    });
    ASSERT_NE(ok, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(ok.get()), PITH_META);
    Tensor bad = Boxed("full", [](pith_stack *s) {
        PushSizes(s, {1});
        pith_stack_push_int(s, 1000);
        pith_stack_push_dtype(s, PITH_INT8);
        pith_stack_push_device(s, PITH_META);
    });
    EXPECT_EQ(bad, nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "without overflow"));
}

// ---- arange ----

TEST_F(FactoriesTest, ArangeOfIntegralValuesIsInt64)
{
    Tensor t(pith_arange(0, 5, 1, (pith_dtype)-1));
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(t.get()), PITH_INT64);
    EXPECT_EQ(Values(t.get()), (Values_{0, 1, 2, 3, 4}));
}

TEST_F(FactoriesTest, ArangeWithAFractionIsFloat32)
{
    Tensor t(pith_arange(0, 1, 0.25, (pith_dtype)-1));
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(t.get()), PITH_FLOAT32);
    EXPECT_EQ(Values(t.get()), (Values_{0, 0.25, 0.5, 0.75}));
}

TEST_F(FactoriesTest, ArangeSizeIsTheCeiling)
{
    Tensor a(pith_arange(0, 10, 3, (pith_dtype)-1));
    Tensor b(pith_arange(5, 0, -2, (pith_dtype)-1));
    Tensor c(pith_arange(1, 2.5, 0.5, (pith_dtype)-1));
    Tensor d(pith_arange(0, 1, 0.1, PITH_FLOAT64));
    ASSERT_TRUE(a && b && c && d) << pith_last_error();
    EXPECT_EQ(Values(a.get()), (Values_{0, 3, 6, 9}));
    EXPECT_EQ(Values(b.get()), (Values_{5, 3, 1}));
    EXPECT_EQ(Values(c.get()), (Values_{1, 1.5, 2}));
    EXPECT_EQ(pith_numel(d.get()), 10);
    EXPECT_EQ(At(d.get(), 3), 0.1 * 3); // start + i * step, in double
}

TEST_F(FactoriesTest, ArangeWithIntegerDtypeTruncatesTheArguments)
{
    Tensor t(pith_arange(0.5, 3.5, 1, PITH_INT32));
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(t.get()), PITH_INT32);
    EXPECT_EQ(Values(t.get()), (Values_{0, 1, 2}));
}

TEST_F(FactoriesTest, ArangeOfEqualBoundsIsEmpty)
{
    Tensor t(pith_arange(3, 3, 1, (pith_dtype)-1));
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(t.get()), (Shape{0}));
}

TEST_F(FactoriesTest, LargeArangeHasEveryValue)
{
    Tensor t(pith_arange(0, 100000, 1, (pith_dtype)-1));
    ASSERT_NE(t, nullptr) << pith_last_error();
    const int64_t *p = static_cast<const int64_t *>(pith_data_ptr(t.get()));
    int64_t wrong = 0;
    for (int64_t i = 0; i < 100000; i++)
        wrong += p[i] != i;
    EXPECT_EQ(wrong, 0);
}

TEST_F(FactoriesTest, ArangeErrors)
{
    EXPECT_EQ(pith_arange(0, 5, 0, (pith_dtype)-1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "step must be nonzero"));
    EXPECT_EQ(pith_arange(0, 5, -1, (pith_dtype)-1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "upper bound and larger bound inconsistent with step sign"));
    EXPECT_EQ(pith_arange(0, 5, 0.5, PITH_INT64), nullptr); // the step truncates to 0
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "step must be nonzero"));
    EXPECT_EQ(pith_arange(0, INFINITY, 1, (pith_dtype)-1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "unsupported range: 0 -> inf"));
    EXPECT_EQ(pith_arange(0, 3, 1, PITH_BOOL), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "arange"));
    EXPECT_EQ(pith_arange(0, 1e30, 1e-30, PITH_FLOAT64), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "invalid size, possible overflow?"));
}

TEST_F(FactoriesTest, ArangeOnMeta)
{
    Tensor t = Boxed("arange.start_step", [](pith_stack *s) {
        pith_stack_push_int(s, 0);
        pith_stack_push_int(s, 10);
        pith_stack_push_int(s, 2);
        pith_stack_push_none(s);
        pith_stack_push_device(s, PITH_META);
    });
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(t.get()), PITH_META);
    EXPECT_EQ(Sizes(t.get()), (Shape{5}));
    EXPECT_EQ(pith_tensor_dtype(t.get()), PITH_INT64);
}

// ---- linspace ----

TEST_F(FactoriesTest, LinspaceEvenlySpacedFloat32)
{
    Tensor t(pith_linspace(0, 1, 5, (pith_dtype)-1));
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(t.get()), PITH_FLOAT32);
    EXPECT_EQ(Values(t.get()), (Values_{0, 0.25, 0.5, 0.75, 1}));
}

TEST_F(FactoriesTest, LinspaceFillsFromBothEndsInFloat)
{
    const int64_t steps = 7;
    Tensor t(pith_linspace(-0.3, 2.9, steps, PITH_FLOAT32));
    ASSERT_NE(t, nullptr) << pith_last_error();
    float start = -0.3f, end = 2.9f, step = (end - start) / (float)(steps - 1);
    for (int64_t i = 0; i < steps; i++) {
        float want = i < steps / 2 ? start + step * (float)i : end - step * (float)(steps - 1 - i);
        EXPECT_EQ((float)At(t.get(), i), want) << i;
    }
    EXPECT_EQ((float)At(t.get(), steps - 1), 2.9f); // the end point is exact
}

TEST_F(FactoriesTest, LinspaceOfIntegersTruncates)
{
    Tensor t(pith_linspace(0, 10, 4, PITH_INT64));
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(Values(t.get()), (Values_{0, 3, 6, 10}));
}

TEST_F(FactoriesTest, LinspaceWithZeroAndOneSteps)
{
    Tensor zero(pith_linspace(2, 3, 0, (pith_dtype)-1));
    Tensor one(pith_linspace(2, 3, 1, PITH_FLOAT64));
    ASSERT_TRUE(zero && one) << pith_last_error();
    EXPECT_EQ(Sizes(zero.get()), (Shape{0}));
    EXPECT_EQ(Values(one.get()), (Values_{2}));
    EXPECT_EQ(pith_linspace(0, 1, -1, (pith_dtype)-1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "number of steps must be non-negative"));
}

// ---- eye ----

TEST_F(FactoriesTest, EyeHasOnesOnTheDiagonal)
{
    Tensor r(pith_eye(2, 3, (pith_dtype)-1));
    Tensor sq(pith_eye(2, -1, PITH_BOOL));
    ASSERT_TRUE(r && sq) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_FLOAT32);
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 3}));
    EXPECT_EQ(Values(r.get()), (Values_{1, 0, 0, 0, 1, 0}));
    EXPECT_EQ(Sizes(sq.get()), (Shape{2, 2}));
    EXPECT_EQ(Values(sq.get()), (Values_{1, 0, 0, 1}));
}

TEST_F(FactoriesTest, EyeErrors)
{
    EXPECT_EQ(pith_eye(-2, -1, (pith_dtype)-1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "n must be greater or equal to 0, got -2"));
    EXPECT_EQ(pith_eye(2, -5, (pith_dtype)-1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "m must be greater or equal to 0, got -5"));
}

TEST_F(FactoriesTest, EyeOnMetaAndEmpty)
{
    Tensor m = Boxed("eye", [](pith_stack *s) {
        pith_stack_push_int(s, 3);
        pith_stack_push_none(s);
        pith_stack_push_none(s);
        pith_stack_push_device(s, PITH_META);
    });
    ASSERT_NE(m, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(m.get()), PITH_META);
    EXPECT_EQ(Sizes(m.get()), (Shape{3, 3}));
    Tensor e(pith_eye(0, 4, (pith_dtype)-1));
    ASSERT_NE(e, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(e.get()), (Shape{0, 4}));
}

} // namespace
} // namespace pith_e_test
