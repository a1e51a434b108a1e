// The destination-passing out= kernels (Note [Destination passing]): sum.IntList_out,
// mean.out, amax.out, amin.out, argmax.out, argmin.out, addmm.out, linear.out, gather.out,
// index_select.out, embedding.out, softmax.int_out, log_softmax.int_out and layer_norm.out.
// Each against its functional op, bit for bit, into a contiguous out (written in place), a
// non-contiguous one and an empty one (resized); a wrong shape and a wrong dtype are errors
// that leave `out` alone.
#include <cmath>
#include <cstring>
#include <functional>

#include "views_test_util.h"

extern "C" bool shim_out_target_is_direct(pith_tensor *target, const pith_tensor *input);

namespace pith_e_test {
namespace {

class OutKernelsTest : public KernelFixture {};

// One argument of a boxed call.
struct Arg {
    enum Kind { TENSOR, INT, INT_LIST, DOUBLE, BOOL, NONE, DTYPE } kind = NONE;
    const pith_tensor *t = nullptr;
    int64_t i = 0;
    Shape list = {};
    double d = 0;
};
Arg T(const Tensor &t) { Arg a; a.kind = Arg::TENSOR; a.t = t.get(); return a; }
Arg I(int64_t i) { Arg a; a.kind = Arg::INT; a.i = i; return a; }
Arg L(Shape l) { Arg a; a.kind = Arg::INT_LIST; a.list = l; return a; }
Arg D(double d) { Arg a; a.kind = Arg::DOUBLE; a.d = d; return a; }
Arg B(bool b) { Arg a; a.kind = Arg::BOOL; a.i = b; return a; }
Arg None() { Arg a; a.kind = Arg::NONE; return a; }
Arg DT(pith_dtype d) { Arg a; a.kind = Arg::DTYPE; a.i = d; return a; }

// A boxed call of op `name`; its first result, or NULL with the error set.
Tensor Call(const char *name, const std::vector<Arg> &args)
{
    const pith_op *op = pith_op_find(name);
    EXPECT_NE(op, nullptr) << name;
    if (!op)
        return nullptr;
    pith_stack *s = pith_stack_new();
    for (const Arg &a : args) {
        switch (a.kind) {
        case Arg::TENSOR: pith_stack_push_tensor(s, a.t); break;
        case Arg::INT: pith_stack_push_int(s, a.i); break;
        case Arg::INT_LIST: pith_stack_push_int_list(s, a.list.data(), a.list.size()); break;
        case Arg::DOUBLE: pith_stack_push_double(s, a.d); break;
        case Arg::BOOL: pith_stack_push_bool(s, a.i != 0); break;
        case Arg::NONE: pith_stack_push_none(s); break;
        case Arg::DTYPE: pith_stack_push_dtype(s, (pith_dtype)a.i); break;
        }
    }
    Tensor r;
    if (pith_call_boxed(op, s) == PITH_OK)
        r.reset(pith_stack_get_tensor(s, 0));
    pith_stack_free(s);
    return r;
}

// Non-trivial floats: element i is 3 sin(0.7 i + seed).
Tensor Wavy(const Shape &sizes, int seed = 0, pith_dtype dtype = PITH_FLOAT32)
{
    int64_t n = 1;
    for (int64_t s : sizes)
        n *= s;
    std::vector<double> v((size_t)n);
    for (int64_t i = 0; i < n; i++)
        v[(size_t)i] = 3 * std::sin(0.7 * (double)i + seed);
    return FromValues(sizes, dtype, v);
}

// int64 indices below `bound`.
Tensor Indices(const Shape &sizes, int64_t bound)
{
    int64_t n = 1;
    for (int64_t s : sizes)
        n *= s;
    std::vector<double> v((size_t)n);
    for (int64_t i = 0; i < n; i++)
        v[(size_t)i] = (double)((i * 7 + 3) % bound);
    return FromValues(sizes, PITH_INT64, v);
}

Tensor Filled(const Shape &sizes, pith_dtype dtype, const Shape &strides = {})
{
    Tensor t(pith_empty_strided((int)sizes.size(), sizes.data(),
                                strides.empty() ? nullptr : strides.data(), dtype, PITH_CPU));
    EXPECT_NE(t, nullptr) << pith_last_error();
    return t;
}

// The elements as doubles, compared by their bits (so -0.0 and 0.0 differ, NaN equals NaN).
::testing::AssertionResult SameBits(const pith_tensor *a, const pith_tensor *b)
{
    if (pith_test::Sizes(a) != pith_test::Sizes(b) || pith_tensor_dtype(a) != pith_tensor_dtype(b))
        return ::testing::AssertionFailure() << "shape or dtype differ";
    std::vector<double> va = pith_test::Values(a), vb = pith_test::Values(b);
    if (std::memcmp(va.data(), vb.data(), va.size() * sizeof(double)) != 0)
        return ::testing::AssertionFailure() << "values differ";
    return ::testing::AssertionSuccess();
}

// One out= op: its functional op, arguments (without out), and the result's shape and dtype.
struct OutCase {
    const char *out_op;
    const char *functional;
    std::function<std::vector<Arg>()> args;
    Shape sizes;  // 2-D, so that a transposed out is another layout
    pith_dtype dtype;
    bool dtype_from_out;  // sum and mean compute in out's dtype
};

// The cases' inputs, made once and kept for the life of the test binary (the cases'
// suite does not count live tensors).
struct Inputs {
    Tensor x = Wavy({3, 4, 5});
    Tensor m = Wavy({4, 5}, 1);
    Tensor mat1 = Wavy({4, 3}, 2), mat2 = Wavy({3, 6}, 3), bias6 = Wavy({6}, 4);
    Tensor weight = Wavy({6, 3}, 5);
    Tensor gather_index = Indices({4, 3}, 5), select_index = Indices({3}, 4);
    Tensor table = Wavy({10, 5}, 6), rows = Indices({3}, 10);
    Tensor w5 = Wavy({5}, 7), b5 = Wavy({5}, 8);
};
const Inputs &In()
{
    static Inputs *in = new Inputs();
    return *in;
}

const std::vector<OutCase> &Cases()
{
    static const std::vector<OutCase> cases = {
        {"sum.IntList_out", "sum.dim_IntList",
         [] { return std::vector<Arg>{T(In().x), L({1}), B(false), None()}; }, {3, 5},
         PITH_FLOAT32, true},
        {"mean.out", "mean.dim",
         [] { return std::vector<Arg>{T(In().x), L({1}), B(false), None()}; }, {3, 5},
         PITH_FLOAT32, true},
        {"amax.out", "amax", [] { return std::vector<Arg>{T(In().x), L({1}), B(false)}; },
         {3, 5}, PITH_FLOAT32, false},
        {"amin.out", "amin", [] { return std::vector<Arg>{T(In().x), L({-2}), B(false)}; },
         {3, 5}, PITH_FLOAT32, false},
        {"argmax.out", "argmax", [] { return std::vector<Arg>{T(In().x), I(1), B(false)}; },
         {3, 5}, PITH_INT64, false},
        {"argmin.out", "argmin", [] { return std::vector<Arg>{T(In().x), I(1), B(false)}; },
         {3, 5}, PITH_INT64, false},
        {"addmm.out", "addmm",
         [] {
             return std::vector<Arg>{T(In().bias6), T(In().mat1), T(In().mat2), D(0.5), D(2)};
         },
         {4, 6}, PITH_FLOAT32, false},
        {"linear.out", "linear",
         [] { return std::vector<Arg>{T(In().mat1), T(In().weight), T(In().bias6)}; }, {4, 6},
         PITH_FLOAT32, false},
        {"gather.out", "gather",
         [] { return std::vector<Arg>{T(In().m), I(1), T(In().gather_index), B(false)}; },
         {4, 3}, PITH_FLOAT32, false},
        {"index_select.out", "index_select",
         [] { return std::vector<Arg>{T(In().m), I(0), T(In().select_index)}; }, {3, 5},
         PITH_FLOAT32, false},
        {"embedding.out", "embedding",
         [] { return std::vector<Arg>{T(In().table), T(In().rows), I(-1), B(false), B(false)}; },
         {3, 5}, PITH_FLOAT32, false},
        {"softmax.int_out", "softmax.int",
         [] { return std::vector<Arg>{T(In().m), I(1), None()}; }, {4, 5}, PITH_FLOAT32, false},
        {"log_softmax.int_out", "log_softmax.int",
         [] { return std::vector<Arg>{T(In().m), I(0), None()}; }, {4, 5}, PITH_FLOAT32, false},
        {"layer_norm.out", "layer_norm",
         [] {
             return std::vector<Arg>{T(In().m), L({5}), T(In().w5), T(In().b5), D(1e-5), B(true)};
         },
         {4, 5}, PITH_FLOAT32, false},
    };
    return cases;
}

std::vector<Arg> WithOut(std::vector<Arg> args, const Tensor &out)
{
    args.push_back(T(out));
    return args;
}

class OutKernelCase : public ::testing::TestWithParam<size_t> {
protected:
    void SetUp() override { (void)In(); }
    const OutCase &c() const { return Cases()[GetParam()]; }
};

TEST_P(OutKernelCase, ContiguousOutIsWrittenInPlaceWithTheFunctionalBits)
{
    Tensor expected = Call(c().functional, c().args());
    ASSERT_NE(expected, nullptr) << pith_last_error();
    Tensor out = Filled(c().sizes, c().dtype);
    void *data = pith_data_ptr(out.get());
    int64_t version = pith_version_counter(out.get());
    Tensor r = Call(c().out_op, WithOut(c().args(), out));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(r.get(), out.get());
    EXPECT_EQ(pith_data_ptr(out.get()), data);
    EXPECT_GT(pith_version_counter(out.get()), version);
    EXPECT_TRUE(SameBits(out.get(), expected.get()));
}

TEST_P(OutKernelCase, NonContiguousOutKeepsItsStridesAndGetsTheFunctionalBits)
{
    Tensor expected = Call(c().functional, c().args());
    ASSERT_NE(expected, nullptr) << pith_last_error();
    Tensor out = Filled(c().sizes, c().dtype, {1, c().sizes[0]});
    Tensor r = Call(c().out_op, WithOut(c().args(), out));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_stride(out.get(), 0), 1);
    EXPECT_EQ(pith_stride(out.get(), 1), c().sizes[0]);
    EXPECT_TRUE(SameBits(out.get(), expected.get()));
}

TEST_P(OutKernelCase, EmptyOutIsResizedToTheResult)
{
    Tensor expected = Call(c().functional, c().args());
    ASSERT_NE(expected, nullptr) << pith_last_error();
    Tensor out = Filled({0}, c().dtype);
    Tensor r = Call(c().out_op, WithOut(c().args(), out));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_test::Sizes(out.get()), c().sizes);
    EXPECT_TRUE(pith_is_contiguous(out.get()));
    EXPECT_TRUE(SameBits(out.get(), expected.get()));
}

TEST_P(OutKernelCase, OutOfAnotherShapeIsAnErrorAndUntouched)
{
    Tensor out(pith_full(2, Shape{c().sizes[1], c().sizes[0] + 1}.data(), 7, c().dtype));
    Tensor r = Call(c().out_op, WithOut(c().args(), out));
    EXPECT_EQ(r, nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "only an empty out= tensor is resized"));
    for (double v : pith_test::Values(out.get()))
        EXPECT_EQ(v, 7);
}

TEST_P(OutKernelCase, OutOfAnotherDtypeIsATypeErrorUnlessTheOpComputesInIt)
{
    if (c().dtype_from_out)
        GTEST_SKIP() << "sum and mean compute in out's dtype (SumAndMeanComputeInOutsDtype)";
    pith_dtype other = c().dtype == PITH_INT64 ? PITH_INT32 : PITH_FLOAT64;
    Tensor out(pith_full(2, c().sizes.data(), 7, other));
    Tensor r = Call(c().out_op, WithOut(c().args(), out));
    EXPECT_EQ(r, nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "Expected out tensor to have dtype"));
    for (double v : pith_test::Values(out.get()))
        EXPECT_EQ(v, 7);
}

std::string CaseName(const ::testing::TestParamInfo<size_t> &info)
{
    std::string name = Cases()[info.param].out_op;
    for (char &ch : name)
        if (ch == '.')
            ch = '_';
    return name;
}
INSTANTIATE_TEST_SUITE_P(Ops, OutKernelCase, ::testing::Range<size_t>(0, 14), CaseName);

TEST_F(OutKernelsTest, EveryCaseIsListed)
{
    EXPECT_EQ(Cases().size(), 14u);
}

TEST_F(OutKernelsTest, SumAndMeanComputeInOutsDtype)
{
    Tensor x = Wavy({3, 4});
    for (const char *op : {"sum", "mean"}) {
        std::string functional = std::string(op) + (op[0] == 's' ? ".dim_IntList" : ".dim");
        std::string out_op = std::string(op) + (op[0] == 's' ? ".IntList_out" : ".out");
        Tensor expected = Call(functional.c_str(), {T(x), L({0}), B(false), DT(PITH_FLOAT64)});
        Tensor out = Filled({4}, PITH_FLOAT64);
        ASSERT_NE(Call(out_op.c_str(), {T(x), L({0}), B(false), None(), T(out)}), nullptr)
            << pith_last_error();
        EXPECT_TRUE(SameBits(out.get(), expected.get())) << op;
        // dtype= given: out must have it.
        Tensor narrow = Filled({4}, PITH_FLOAT32);
        EXPECT_EQ(Call(out_op.c_str(), {T(x), L({0}), B(false), DT(PITH_FLOAT64), T(narrow)}),
                  nullptr);
        EXPECT_TRUE(HasError(PITH_ERR_TYPE, "Expected out tensor to have dtype float64"));
    }
}

TEST_F(OutKernelsTest, SumOfIntegersIntoFloatOutSumsInFloat)
{
    Tensor x = Indices({3, 4}, 9);
    Tensor expected = Call("sum.dim_IntList", {T(x), L({1}), B(false), DT(PITH_FLOAT64)});
    Tensor out = Filled({3}, PITH_FLOAT64);
    ASSERT_NE(Call("sum.IntList_out", {T(x), L({1}), B(false), None(), T(out)}), nullptr);
    EXPECT_TRUE(SameBits(out.get(), expected.get()));
}

TEST_F(OutKernelsTest, ContiguousOutApartFromTheInputsIsWrittenWithoutATemporary)
{
    Tensor x = Wavy({4, 5});
    Tensor out = Filled({4, 5}, PITH_FLOAT32);
    EXPECT_TRUE(shim_out_target_is_direct(out.get(), x.get()));
    Tensor strided = Filled({4, 5}, PITH_FLOAT32, {1, 4});
    EXPECT_FALSE(shim_out_target_is_direct(strided.get(), x.get()));
    EXPECT_FALSE(shim_out_target_is_direct(x.get(), x.get()));
}

TEST_F(OutKernelsTest, OutThatIsTheInputGetsTheResult)
{
    Tensor x = Wavy({4, 5});
    Tensor expected_softmax = Call("softmax.int", {T(x), I(1), None()});
    Tensor expected_norm = Call("layer_norm", {T(expected_softmax), L({5}), None(), None(),
                                               D(1e-5), B(true)});
    ASSERT_NE(Call("softmax.int_out", {T(x), I(1), None(), T(x)}), nullptr) << pith_last_error();
    EXPECT_TRUE(SameBits(x.get(), expected_softmax.get()));
    ASSERT_NE(Call("layer_norm.out", {T(x), L({5}), None(), None(), D(1e-5), B(true), T(x)}),
              nullptr)
        << pith_last_error();
    EXPECT_TRUE(SameBits(x.get(), expected_norm.get()));
    Tensor m = Wavy({4, 5});
    Tensor index = Indices({4, 3}, 5);
    Tensor expected_gather = Call("gather", {T(m), I(1), T(index), B(false)});
    Tensor view(pith_slice(m.get(), 1, 0, 3, 1));  // [4, 3], overlapping m
    ASSERT_NE(Call("gather.out", {T(m), I(1), T(index), B(false), T(view)}), nullptr)
        << pith_last_error();
    EXPECT_TRUE(SameBits(view.get(), expected_gather.get()));
}

TEST_F(OutKernelsTest, OutThatIsTheIndexIsSafe)
{
    Tensor m = Wavy({4, 5}, 0, PITH_INT64);
    Tensor index = Indices({4, 5}, 5);
    Tensor expected = Call("gather", {T(m), I(1), T(index), B(false)});
    ASSERT_NE(Call("gather.out", {T(m), I(1), T(index), B(false), T(index)}), nullptr)
        << pith_last_error();
    EXPECT_TRUE(SameBits(index.get(), expected.get()));
}

TEST_F(OutKernelsTest, ExpandedOutIsAnError)
{
    Tensor x = Wavy({3, 4, 5});
    Tensor base = Filled({1, 5}, PITH_FLOAT32);
    Tensor expanded(pith_expand(base.get(), 2, Shape{3, 5}.data()));
    ASSERT_NE(expanded, nullptr) << pith_last_error();
    EXPECT_EQ(Call("amax.out", {T(x), L({1}), B(false), T(expanded)}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "more than one element of the written-to tensor"));
}

TEST_F(OutKernelsTest, MetaOutIsCheckedAndResized)
{
    Tensor x = MetaTensor({3, 4, 5});
    Tensor out = MetaTensor({0}, PITH_INT64);
    Tensor r = Call("argmax.out", {T(x), I(2), B(true), T(out)});
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_test::Sizes(out.get()), (Shape{3, 4, 1}));
    EXPECT_EQ(pith_tensor_device(out.get()), PITH_META);
    Tensor wrong = MetaTensor({3, 4}, PITH_FLOAT32);
    EXPECT_EQ(Call("softmax.int_out", {T(x), I(0), None(), T(wrong)}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "only an empty out= tensor is resized"));
}

TEST_F(OutKernelsTest, CpuOutOfMetaInputsIsAnError)
{
    Tensor x = MetaTensor({4, 5});
    Tensor out = Filled({4, 5}, PITH_FLOAT32);
    EXPECT_EQ(Call("softmax.int_out", {T(x), I(0), None(), T(out)}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "device"));
}

}  // namespace
}  // namespace pith_e_test
