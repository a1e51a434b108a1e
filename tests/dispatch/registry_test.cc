// registry_test.cc — operator lookup, definition, kernel registration, boxed calls (defaults,
// type checks, argument counts) and kernel selection (fallbacks, fallthrough, redispatch).
//
// The registry is process-wide and permanent, so every op defined here has a name of its
// own (namespace t_<test>).
#include <atomic>
#include <string>
#include <vector>

#include "dispatch_shim.h"
#include "test_util.h"

namespace {

using OpFind = DispatchTest;
using OpDefine = DispatchTest;
using BoxedCall = DispatchTest;
using KernelRegistry = DispatchTest;
using Selection = DispatchTest;

// ---- kernels used by the tests ----

// Returns argument 0 (a tensor) as the result.
pith_status identity_kernel(const pith_op *, pith_stack *s, void *ctx)
{
    if (ctx)
        ++*static_cast<std::atomic<int> *>(ctx);
    pith_tensor *x = pith_stack_get_tensor(s, 0);
    if (!x)
        return pith_last_status();
    pith_stack_drop(s, pith_stack_size(s));
    return pith_stack_push_tensor_steal(s, x);
}

// scale(Tensor x, float s): x * s for a contiguous float32 x.
pith_status scale_kernel(const pith_op *, pith_stack *s, void *)
{
    pith_tensor *x = pith_stack_get_tensor(s, 0);
    double factor = pith_stack_get_double(s, 1);
    std::vector<float> values = tensor_values(x);
    for (float &v : values)
        v = (float)(v * factor);
    pith_release(x);
    pith_stack_drop(s, 2);
    return pith_stack_push_tensor_steal(s, make_tensor(values));
}

// Records which key ran into a std::vector<std::string> ctx, then returns a new tensor of
// one element.
struct KeyLog {
    std::vector<std::string> keys;
};
template <const char *Key>
pith_status logging_kernel(const pith_op *, pith_stack *s, void *ctx)
{
    static_cast<KeyLog *>(ctx)->keys.push_back(Key);
    pith_stack_drop(s, pith_stack_size(s));
    return pith_stack_push_tensor_steal(s, make_tensor({1}));
}
constexpr char kCPU[] = "CPU";
constexpr char kMeta[] = "Meta";

// A kernel at a key above the backends: logs, then runs what is below `Key`.
template <const char *Key>
pith_status redispatch_kernel(const pith_op *op, pith_stack *s, void *ctx)
{
    static_cast<KeyLog *>(ctx)->keys.push_back(Key);
    return pith_call_boxed_below(op, s, Key);
}
constexpr char kAutograd[] = "Autograd";
constexpr char kPythonMode[] = "PythonMode";

// ---- pith_op_find ----

TEST_F(OpFind, BareNameResolvesToTheTableDefault)
{
    const pith_op *op = pith_op_find("add");
    ASSERT_NE(op, nullptr) << pith_last_error();
    EXPECT_STREQ(pith_op_name(op), "pith::add.Tensor");
    EXPECT_EQ(op, pith_op_find("add.Tensor"));
}

TEST_F(OpFind, BareNameWithAnEmptyOverload)
{
    const pith_op *op = pith_op_find("max");
    ASSERT_NE(op, nullptr);
    EXPECT_STREQ(pith_op_name(op), "pith::max");
    EXPECT_STREQ(pith_op_name(pith_op_find("max.dim")), "pith::max.dim");
}

TEST_F(OpFind, BareNameWithOnlyNamedOverloads)
{
    const pith_op *op = pith_op_find("split");
    ASSERT_NE(op, nullptr);
    EXPECT_STREQ(pith_op_name(op), "pith::split.Tensor");
}

TEST_F(OpFind, PithNamespaceIsOptional)
{
    EXPECT_EQ(pith_op_find("pith::add.Tensor"), pith_op_find("add.Tensor"));
    EXPECT_EQ(pith_op_find("pith::add"), pith_op_find("add"));
    EXPECT_NE(pith_op_find("pith::add.out"), nullptr);
}

TEST_F(OpFind, UnknownNameIsNullWithAValueError)
{
    EXPECT_EQ(pith_op_find("no_such_op"), nullptr);
    EXPECT_ERROR(PITH_ERR_VALUE, "unknown operator 'no_such_op'");
    pith_clear_error();
    EXPECT_EQ(pith_op_find("add.NoSuchOverload"), nullptr);
    EXPECT_ERROR(PITH_ERR_VALUE, "add.NoSuchOverload");
    EXPECT_EQ(pith_op_find("other_ns::add"), nullptr);
    EXPECT_EQ(pith_op_find(""), nullptr);
    EXPECT_EQ(pith_op_find("::"), nullptr);
}

TEST_F(OpFind, NullNameIsAnError)
{
    EXPECT_EQ(pith_op_find(nullptr), nullptr);
    EXPECT_ERROR(PITH_ERR_VALUE, "NULL");
}

TEST_F(OpFind, CustomNamespaceBareNameIsTheFirstOverload)
{
    ASSERT_EQ(pith_op_define("t_find::op.second(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_op_define("t_find::op.first(Tensor x) -> Tensor"), PITH_OK);
    EXPECT_STREQ(pith_op_name(pith_op_find("t_find::op")), "t_find::op.second");
    EXPECT_STREQ(pith_op_name(pith_op_find("t_find::op.first")), "t_find::op.first");
    EXPECT_EQ(pith_op_find("op.first"), nullptr); // not in the pith namespace
}

TEST_F(OpFind, AnEmptyOverloadTakesTheBareNameOver)
{
    ASSERT_EQ(pith_op_define("t_find2::op.named(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_op_define("t_find2::op(Tensor x, int n) -> Tensor"), PITH_OK);
    EXPECT_STREQ(pith_op_name(pith_op_find("t_find2::op")), "t_find2::op");
    EXPECT_STREQ(pith_op_name(pith_op_find("t_find2::op.named")), "t_find2::op.named");
}

TEST_F(OpFind, BuiltinOpsAreMarkedBuiltin)
{
    EXPECT_GE(shim_op_builtin_id(pith_op_find("add")), 0);
    ASSERT_EQ(pith_op_define("t_find3::custom(Tensor x) -> Tensor"), PITH_OK);
    EXPECT_EQ(shim_op_builtin_id(pith_op_find("t_find3::custom")), -1);
}

// ---- pith_op_define, names, listing ----

TEST_F(OpDefine, SchemaAndNameComeBack)
{
    const char *schema = "t_def::scale.fast(Tensor x, float s=2) -> Tensor";
    ASSERT_EQ(pith_op_define(schema), PITH_OK);
    const pith_op *op = pith_op_find("t_def::scale.fast");
    ASSERT_NE(op, nullptr);
    EXPECT_STREQ(pith_op_schema(op), schema);
    EXPECT_STREQ(pith_op_name(op), "t_def::scale.fast");
}

TEST_F(OpDefine, WithoutNamespaceGoesToPith)
{
    ASSERT_EQ(pith_op_define("t_def_no_ns(Tensor x) -> Tensor"), PITH_OK);
    EXPECT_STREQ(pith_op_name(pith_op_find("t_def_no_ns")), "pith::t_def_no_ns");
}

TEST_F(OpDefine, DuplicateNameIsAValueError)
{
    ASSERT_EQ(pith_op_define("t_dup::f.x(Tensor x) -> Tensor"), PITH_OK);
    EXPECT_EQ(pith_op_define("t_dup::f.x(Tensor y, int n) -> Tensor"), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "operator 't_dup::f.x' is already defined");
}

TEST_F(OpDefine, DuplicateEmptyOverloadIsAValueError)
{
    ASSERT_EQ(pith_op_define("t_dup::g(Tensor x) -> Tensor"), PITH_OK);
    EXPECT_EQ(pith_op_define("t_dup::g(Tensor x) -> Tensor"), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "'t_dup::g' is already defined");
}

TEST_F(OpDefine, RedefiningABuiltinIsAValueError)
{
    EXPECT_EQ(pith_op_define("add.Tensor(Tensor a, Tensor b) -> Tensor"), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "'pith::add.Tensor' is already defined");
}

TEST_F(OpDefine, MalformedSchemaIsAValueError)
{
    size_t before = pith_op_count();
    EXPECT_EQ(pith_op_define("t_bad::f(Tensor x -> Tensor"), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "invalid schema: expected ',' or ')' but found '-'");
    EXPECT_EQ(pith_op_count(), before);
    EXPECT_EQ(pith_op_find("t_bad::f"), nullptr);
}

TEST_F(OpDefine, NullSchemaIsAValueError)
{
    EXPECT_EQ(pith_op_define(nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "NULL");
}

TEST_F(OpDefine, CountAndAtListEveryOp)
{
    size_t before = pith_op_count();
    ASSERT_EQ(pith_op_define("t_list_ops::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_op_count(), before + 1);
    EXPECT_EQ(pith_op_at(before), pith_op_find("t_list_ops::f"));
    EXPECT_EQ(pith_op_at(before + 1), nullptr);
    EXPECT_ERROR(PITH_ERR_INDEX, "out of range");
}

TEST_F(OpDefine, NullOpAccessorsAreErrors)
{
    EXPECT_EQ(pith_op_name(nullptr), nullptr);
    EXPECT_ERROR(PITH_ERR_VALUE, "NULL");
    EXPECT_EQ(pith_op_schema(nullptr), nullptr);
}

// ---- boxed calls of built-in ops (kernels from kernels/) ----

TEST_F(BoxedCall, AddWithAlphaDefaulted)
{
    TensorPtr a(make_tensor({1, 2, 3})), b(make_tensor({10, 20, 30}));
    StackPtr s;
    pith_stack_push_tensor(s, a);
    pith_stack_push_tensor(s, b);
    ASSERT_EQ(pith_call_boxed(pith_op_find("add"), s), PITH_OK) << pith_last_error();
    ASSERT_EQ(pith_stack_size(s), 1u);
    TensorPtr r(pith_stack_get_tensor(s, 0));
    EXPECT_EQ(tensor_values(r), (std::vector<float>{11, 22, 33}));
}

TEST_F(BoxedCall, AddWithExplicitAlpha)
{
    TensorPtr a(make_tensor({1, 2})), b(make_tensor({10, 20}));
    StackPtr s;
    pith_stack_push_tensor(s, a);
    pith_stack_push_tensor(s, b);
    pith_stack_push_int(s, 2);
    ASSERT_EQ(pith_call_boxed(pith_op_find("add.Tensor"), s), PITH_OK) << pith_last_error();
    TensorPtr r(pith_stack_get_tensor(s, 0));
    EXPECT_EQ(tensor_values(r), (std::vector<float>{21, 42}));
}

TEST_F(BoxedCall, TupleReturnsComeBackInOrder)
{
    TensorPtr x(make_tensor({3, 9, 4}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_stack_push_int(s, 0);
    ASSERT_EQ(pith_call_boxed(pith_op_find("max.dim"), s), PITH_OK) << pith_last_error();
    ASSERT_EQ(pith_stack_size(s), 2u);
    TensorPtr values(pith_stack_get_tensor(s, 0)), indices(pith_stack_get_tensor(s, 1));
    EXPECT_EQ(tensor_values(values), std::vector<float>{9});
    EXPECT_EQ(tensor_values(indices), std::vector<float>{1});
}

TEST_F(BoxedCall, WrongTypeNamesTheArgument)
{
    TensorPtr a(make_tensor({1})), b(make_tensor({2}));
    StackPtr s;
    pith_stack_push_tensor(s, a);
    pith_stack_push_tensor(s, b);
    pith_stack_push_string(s, "two");
    EXPECT_EQ(pith_call_boxed(pith_op_find("add"), s), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE,
                 "add.Tensor: argument 'alpha' (position 3) must be Scalar, not str");
    EXPECT_EQ(pith_stack_size(s), 3u); // the stack is left as it was given
}

TEST_F(BoxedCall, NoneForATensorIsATypeError)
{
    TensorPtr a(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, a);
    pith_stack_push_none(s);
    EXPECT_EQ(pith_call_boxed(pith_op_find("add"), s), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "argument 'other' (position 2) must be Tensor, not None");
    EXPECT_EQ(pith_stack_size(s), 2u);
}

TEST_F(BoxedCall, TooManyArgumentsIsAValueError)
{
    TensorPtr a(make_tensor({1}));
    StackPtr s;
    for (int i = 0; i < 4; i++)
        pith_stack_push_tensor(s, a);
    EXPECT_EQ(pith_call_boxed(pith_op_find("add"), s), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "add.Tensor: expected at most 3 arguments, got 4");
    EXPECT_EQ(pith_stack_size(s), 4u);
}

TEST_F(BoxedCall, TooFewArgumentsIsAValueError)
{
    TensorPtr a(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, a);
    EXPECT_EQ(pith_call_boxed(pith_op_find("add"), s), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "add.Tensor: missing argument 'other' (position 2): expected "
                                 "at least 2 arguments, got 1");
    EXPECT_EQ(pith_stack_size(s), 1u);
}

TEST_F(BoxedCall, MissingKwargOnlyArgumentWithoutDefault)
{
    TensorPtr a(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, a);
    pith_stack_push_tensor(s, a);
    EXPECT_EQ(pith_call_boxed(pith_op_find("add.out"), s), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "add.out: missing argument 'out' (position 4): expected at "
                                 "least 4 arguments, got 2");
    EXPECT_EQ(pith_stack_size(s), 2u); // the default pushed for alpha was taken back
}

TEST_F(BoxedCall, NullOpOrStackIsAValueError)
{
    StackPtr s;
    EXPECT_EQ(pith_call_boxed(nullptr, s), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "the operator is NULL");
    EXPECT_EQ(pith_call_boxed(pith_op_find("add"), nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "the stack is NULL");
}

// ---- custom ops: definition, kernel, boxed call ----

TEST_F(BoxedCall, CustomOpWithACpuKernel)
{
    ASSERT_EQ(pith_op_define("t_scale::scale(Tensor x, float s) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_scale::scale", "CPU", scale_kernel, nullptr), PITH_OK);
    TensorPtr x(make_tensor({1, 2, 3}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_stack_push_double(s, 1.5);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_scale::scale"), s), PITH_OK) << pith_last_error();
    ASSERT_EQ(pith_stack_size(s), 1u);
    TensorPtr r(pith_stack_get_tensor(s, 0));
    EXPECT_EQ(tensor_values(r), (std::vector<float>{1.5f, 3, 4.5f}));
}

TEST_F(BoxedCall, FloatArgumentAcceptsAnInt)
{
    ASSERT_EQ(pith_op_define("t_scale2::scale(Tensor x, float s) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_scale2::scale", "CPU", scale_kernel, nullptr), PITH_OK);
    TensorPtr x(make_tensor({1, 2}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_stack_push_int(s, 3);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_scale2::scale"), s), PITH_OK) << pith_last_error();
    TensorPtr r(pith_stack_get_tensor(s, 0));
    EXPECT_EQ(tensor_values(r), (std::vector<float>{3, 6}));
}

// Checks, inside the kernel, every value that a default filled in.
struct DefaultsSeen {
    bool ok = false;
    std::string why;
};
pith_status defaults_kernel(const pith_op *, pith_stack *s, void *ctx)
{
    auto *seen = static_cast<DefaultsSeen *>(ctx);
    size_t n = 0;
    const int64_t *list = pith_stack_get_int_list(s, 4, &n);
    if (pith_stack_size(s) != 9)
        seen->why = "size " + std::to_string(pith_stack_size(s));
    else if (pith_stack_get_int(s, 1) != 3)
        seen->why = "a";
    else if (pith_stack_get_double(s, 2) != 1e-05)
        seen->why = "b";
    else if (std::string(pith_stack_get_string(s, 3)) != "none")
        seen->why = "c";
    else if (!list || n != 2 || list[0] != 1 || list[1] != -2)
        seen->why = "d";
    else if (pith_stack_get_bool(s, 5) != true)
        seen->why = "flag";
    else if (pith_stack_kind(s, 6) != PITH_VALUE_NONE)
        seen->why = "dtype";
    else if (pith_stack_kind(s, 7) != PITH_VALUE_DOUBLE || pith_stack_get_double(s, 7) != 0.5)
        seen->why = "alpha";
    else if (pith_stack_get_dtype(s, 8) != PITH_INT64)
        seen->why = "kind";
    else
        seen->ok = true;
    return identity_kernel(nullptr, s, nullptr);
}

TEST_F(BoxedCall, DefaultsAreFilledInPositionalOrder)
{
    ASSERT_EQ(pith_op_define("t_defaults::f(Tensor x, int a=3, float b=1e-05, str c='none', "
                             "int[] d=[1, -2], *, bool flag=True, ScalarType? dtype=None, "
                             "Scalar alpha=0.5, ScalarType kind=long) -> Tensor"),
              PITH_OK);
    DefaultsSeen seen;
    ASSERT_EQ(pith_kernel_register("t_defaults::f", "CPU", defaults_kernel, &seen), PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_defaults::f"), s), PITH_OK) << pith_last_error();
    EXPECT_TRUE(seen.ok) << seen.why;
    EXPECT_EQ(pith_stack_size(s), 1u);
}

pith_status ints_kernel(const pith_op *, pith_stack *s, void *ctx)
{
    auto *out = static_cast<std::vector<int64_t> *>(ctx);
    out->clear();
    for (size_t i = 1; i < pith_stack_size(s); i++)
        out->push_back(pith_stack_get_int(s, i));
    return identity_kernel(nullptr, s, nullptr);
}

TEST_F(BoxedCall, GivenValuesAreKeptAndTheRestDefaulted)
{
    ASSERT_EQ(pith_op_define("t_defaults2::f(Tensor x, int a=3, int b=4) -> Tensor"), PITH_OK);
    std::vector<int64_t> seen;
    ASSERT_EQ(pith_kernel_register("t_defaults2::f", "CPU", ints_kernel, &seen), PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_stack_push_int(s, 7);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_defaults2::f"), s), PITH_OK) << pith_last_error();
    EXPECT_EQ(seen, (std::vector<int64_t>{7, 4}));
}

// The values a kernel received, by kind.
pith_status kinds_kernel(const pith_op *, pith_stack *s, void *ctx)
{
    auto *kinds = static_cast<std::vector<pith_value_kind> *>(ctx);
    kinds->clear();
    for (size_t i = 0; i < pith_stack_size(s); i++)
        kinds->push_back(pith_stack_kind(s, i));
    return identity_kernel(nullptr, s, nullptr);
}

class BoxedTypes : public DispatchTest {
protected:
    static void SetUpTestSuite()
    {
        pith_op_define("t_types::f(Tensor x, Scalar s, float f, int[] l, Tensor? t, "
                       "ScalarType? d, Device? dev, int? i, bool b, str name, int n) -> Tensor");
        pith_kernel_register("t_types::f", "CPU", kinds_kernel, &kinds);
    }
    void TearDown() override
    {
        pith_stack_drop(s, pith_stack_size(s));
        DispatchTest::TearDown();
    }
    static std::vector<pith_value_kind> kinds;
    TensorPtr x{make_tensor({1})};
    StackPtr s;

    // Pushes valid values for every argument, except `replace` (pushed by `push`).
    template <typename F>
    pith_status call_with(size_t replace, F push)
    {
        int64_t list[1] = {1};
        for (size_t i = 0; i < 11; i++) {
            if (i == replace) {
                push(s.s);
                continue;
            }
            switch (i) {
            case 0: pith_stack_push_tensor(s, x); break;
            case 1: pith_stack_push_int(s, 1); break;
            case 2: pith_stack_push_double(s, 1.0); break;
            case 3: pith_stack_push_int_list(s, list, 1); break;
            case 4: pith_stack_push_none(s); break;
            case 5: pith_stack_push_none(s); break;
            case 6: pith_stack_push_none(s); break;
            case 7: pith_stack_push_none(s); break;
            case 8: pith_stack_push_bool(s, true); break;
            case 9: pith_stack_push_string(s, "x"); break;
            case 10: pith_stack_push_int(s, 1); break;
            }
        }
        return pith_call_boxed(pith_op_find("t_types::f"), s);
    }
};
std::vector<pith_value_kind> BoxedTypes::kinds;

TEST_F(BoxedTypes, ScalarAcceptsIntDoubleAndBool)
{
    EXPECT_EQ(call_with(1, [](pith_stack *s) { pith_stack_push_double(s, 0.5); }), PITH_OK);
    EXPECT_EQ(kinds[1], PITH_VALUE_DOUBLE);
    pith_stack_drop(s, 1);
    EXPECT_EQ(call_with(1, [](pith_stack *s) { pith_stack_push_bool(s, true); }), PITH_OK);
    EXPECT_EQ(kinds[1], PITH_VALUE_BOOL);
    pith_stack_drop(s, 1);
    EXPECT_EQ(call_with(1, [](pith_stack *s) { pith_stack_push_int(s, 2); }), PITH_OK);
    EXPECT_EQ(kinds[1], PITH_VALUE_INT);
}

TEST_F(BoxedTypes, ScalarRejectsAString)
{
    EXPECT_EQ(call_with(1, [](pith_stack *s) { pith_stack_push_string(s, "1"); }), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "t_types::f: argument 's' (position 2) must be Scalar, not str");
}

TEST_F(BoxedTypes, FloatAcceptsAnIntButNotABool)
{
    EXPECT_EQ(call_with(2, [](pith_stack *s) { pith_stack_push_int(s, 2); }), PITH_OK);
    pith_stack_drop(s, 1);
    EXPECT_EQ(call_with(2, [](pith_stack *s) { pith_stack_push_bool(s, true); }), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "argument 'f' (position 3) must be float, not bool");
}

TEST_F(BoxedTypes, IntListAcceptsASingleInt)
{
    EXPECT_EQ(call_with(3, [](pith_stack *s) { pith_stack_push_int(s, 2); }), PITH_OK);
    pith_stack_drop(s, 1);
    EXPECT_EQ(call_with(3, [](pith_stack *s) { pith_stack_push_double(s, 2); }), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "argument 'l' (position 4) must be int[], not float");
}

TEST_F(BoxedTypes, OptionalsAcceptTheirTypeAndNone)
{
    TensorPtr t(make_tensor({2}));
    EXPECT_EQ(call_with(4, [&](pith_stack *s) { pith_stack_push_tensor(s, t); }), PITH_OK);
    EXPECT_EQ(kinds[4], PITH_VALUE_TENSOR);
    pith_stack_drop(s, 1);
    EXPECT_EQ(call_with(5, [](pith_stack *s) { pith_stack_push_dtype(s, PITH_INT8); }), PITH_OK);
    EXPECT_EQ(kinds[5], PITH_VALUE_DTYPE);
    pith_stack_drop(s, 1);
    EXPECT_EQ(call_with(6, [](pith_stack *s) { pith_stack_push_device(s, PITH_CPU); }), PITH_OK);
    EXPECT_EQ(kinds[6], PITH_VALUE_DEVICE);
    pith_stack_drop(s, 1);
    EXPECT_EQ(call_with(7, [](pith_stack *s) { pith_stack_push_int(s, 4); }), PITH_OK);
    EXPECT_EQ(kinds[7], PITH_VALUE_INT);
}

TEST_F(BoxedTypes, DtypeIsNotAnInt)
{
    EXPECT_EQ(call_with(5, [](pith_stack *s) { pith_stack_push_int(s, 1); }), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "argument 'd' (position 6) must be ScalarType?, not int");
}

TEST_F(BoxedTypes, DeviceIsNotAString)
{
    EXPECT_EQ(call_with(6, [](pith_stack *s) { pith_stack_push_string(s, "cpu"); }),
              PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "argument 'dev' (position 7) must be Device?, not str");
}

TEST_F(BoxedTypes, BoolIsNotAnInt)
{
    EXPECT_EQ(call_with(8, [](pith_stack *s) { pith_stack_push_int(s, 1); }), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "argument 'b' (position 9) must be bool, not int");
}

TEST_F(BoxedTypes, IntIsNotABoolOrADouble)
{
    EXPECT_EQ(call_with(10, [](pith_stack *s) { pith_stack_push_bool(s, true); }), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "argument 'n' (position 11) must be int, not bool");
    pith_stack_drop(s, pith_stack_size(s));
    EXPECT_EQ(call_with(10, [](pith_stack *s) { pith_stack_push_double(s, 1); }), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "must be int, not float");
}

TEST_F(BoxedTypes, StrIsNotAnInt)
{
    EXPECT_EQ(call_with(9, [](pith_stack *s) { pith_stack_push_int(s, 1); }), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "argument 'name' (position 10) must be str, not int");
}

TEST_F(BoxedTypes, TensorIsNotATensorList)
{
    TensorPtr t(make_tensor({2}));
    const pith_tensor *list[1] = {t};
    EXPECT_EQ(call_with(0, [&](pith_stack *s) { pith_stack_push_tensor_list(s, list, 1); }),
              PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "argument 'x' (position 1) must be Tensor, not Tensor[]");
}

// See Note [None entries of tensor lists] (boxing.c).
TEST_F(BoxedTypes, TensorListArgumentRejectsANoneEntry)
{
    TensorPtr a(make_tensor({1}));
    const pith_tensor *list[2] = {a, nullptr};
    StackPtr st;
    pith_stack_push_tensor_list(st, list, 2);
    EXPECT_EQ(pith_call_boxed(pith_op_find("cat"), st), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE,
                 "cat: argument 'tensors' (position 1) must be Tensor[], but element 1 is None");
    EXPECT_EQ(pith_stack_size(st), 1u);
}

TEST_F(BoxedTypes, OptionalTensorListAcceptsNoneEntries)
{
    static std::vector<const pith_tensor *> seen;
    ASSERT_EQ(pith_op_define("t_optlist::f(Tensor?[] xs) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_optlist::f", "CPU",
                                   [](const pith_op *, pith_stack *s, void *) {
                                       size_t n = 0;
                                       pith_tensor *const *v = pith_stack_get_tensor_list(s, 0, &n);
                                       seen.assign(v, v + n);
                                       pith_tensor *first = v[1];
                                       pith_retain(first);
                                       pith_stack_drop(s, 1);
                                       return pith_stack_push_tensor_steal(s, first);
                                   },
                                   nullptr),
              PITH_OK);
    TensorPtr a(make_tensor({1}));
    const pith_tensor *list[3] = {nullptr, a, nullptr};
    StackPtr st;
    pith_stack_push_tensor_list(st, list, 3);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_optlist::f"), st), PITH_OK) << pith_last_error();
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[0], nullptr);
    EXPECT_EQ(seen[1], a.t);
    EXPECT_EQ(seen[2], nullptr);
    seen.clear();
}

TEST_F(BoxedTypes, OptionalTensorListIsNotATensor)
{
    ASSERT_EQ(pith_op_define("t_optlist::g(Tensor?[] xs) -> Tensor"), PITH_OK);
    TensorPtr a(make_tensor({1}));
    StackPtr st;
    pith_stack_push_tensor(st, a);
    EXPECT_EQ(pith_call_boxed(pith_op_find("t_optlist::g"), st), PITH_ERR_TYPE);
    EXPECT_ERROR(PITH_ERR_TYPE, "argument 'xs' (position 1) must be Tensor?[], not Tensor");
}

TEST_F(BoxedCall, KernelLeavingTheWrongCountIsARuntimeError)
{
    ASSERT_EQ(pith_op_define("t_count::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_count::f", "CPU",
                                   [](const pith_op *, pith_stack *s, void *) {
                                       pith_stack_drop(s, 1);
                                       return PITH_OK;
                                   },
                                   nullptr),
              PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    EXPECT_EQ(pith_call_boxed(pith_op_find("t_count::f"), s), PITH_ERR_RUNTIME);
    EXPECT_ERROR(PITH_ERR_RUNTIME, "t_count::f: the kernel for dispatch key CPU left 0 values "
                                   "on the stack, expected 1");
}

TEST_F(BoxedCall, KernelErrorsPassThrough)
{
    ASSERT_EQ(pith_op_define("t_fail::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_fail::f", "CPU",
                                   [](const pith_op *, pith_stack *, void *) {
                                       return pith_set_error(PITH_ERR_INDEX, "kernel says no");
                                   },
                                   nullptr),
              PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    EXPECT_EQ(pith_call_boxed(pith_op_find("t_fail::f"), s), PITH_ERR_INDEX);
    EXPECT_ERROR(PITH_ERR_INDEX, "kernel says no");
}

// ---- kernel registration ----

TEST_F(KernelRegistry, SecondKernelForTheSameKeyIsAValueError)
{
    ASSERT_EQ(pith_op_define("t_kreg::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_kreg::f", "CPU", identity_kernel, nullptr), PITH_OK);
    EXPECT_EQ(pith_kernel_register("t_kreg::f", "CPU", identity_kernel, nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "t_kreg::f: a kernel for dispatch key CPU is already registered");
    EXPECT_EQ(pith_kernel_register("t_kreg::f", "Meta", identity_kernel, nullptr), PITH_OK);
}

TEST_F(KernelRegistry, BuiltinKernelsAreAlreadyRegistered)
{
    EXPECT_EQ(pith_kernel_register("add", "CPU", identity_kernel, nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "add.Tensor: a kernel for dispatch key CPU is already registered");
}

// The autograd layer registers each differentiable op's generated kernel (and each composite
// implicit op's own) at Autograd when the library loads.
TEST_F(KernelRegistry, BuiltinAutogradKernelsAreAlreadyRegistered)
{
    EXPECT_EQ(pith_kernel_register("add", "Autograd", identity_kernel, nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE,
                 "add.Tensor: a kernel for dispatch key Autograd is already registered");
    EXPECT_EQ(pith_kernel_register("reshape", "Autograd", identity_kernel, nullptr),
              PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "reshape: a kernel for dispatch key Autograd is already registered");
}

TEST_F(KernelRegistry, UnknownOpIsAValueError)
{
    EXPECT_EQ(pith_kernel_register("t_nope::f", "CPU", identity_kernel, nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "unknown operator 't_nope::f'");
    EXPECT_EQ(pith_kernel_register(nullptr, "CPU", identity_kernel, nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "the operator name is NULL");
}

TEST_F(KernelRegistry, UnknownKeyIsAValueError)
{
    EXPECT_EQ(pith_kernel_register("add", "CUDA", identity_kernel, nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "unknown dispatch key 'CUDA'");
    EXPECT_EQ(pith_kernel_register("add", nullptr, identity_kernel, nullptr), PITH_ERR_VALUE);
    EXPECT_EQ(pith_kernel_unregister("add", "cpu"), PITH_ERR_VALUE); // names are exact
}

TEST_F(KernelRegistry, NullKernelIsAValueError)
{
    ASSERT_EQ(pith_op_define("t_kreg_null::f(Tensor x) -> Tensor"), PITH_OK);
    EXPECT_EQ(pith_kernel_register("t_kreg_null::f", "CPU", nullptr, nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "the kernel is NULL");
}

TEST_F(KernelRegistry, UnregisterRemovesTheKernel)
{
    ASSERT_EQ(pith_op_define("t_unreg::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_unreg::f", "CPU", identity_kernel, nullptr), PITH_OK);
    ASSERT_EQ(pith_kernel_unregister("t_unreg::f", "CPU"), PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    EXPECT_EQ(pith_call_boxed(pith_op_find("t_unreg::f"), s), PITH_ERR_NOT_IMPLEMENTED);
    EXPECT_ERROR(PITH_ERR_NOT_IMPLEMENTED,
                 "t_unreg::f: no kernel for dispatch key CPU (keys: CPU)");
}

TEST_F(KernelRegistry, UnregisterTwiceIsAValueError)
{
    ASSERT_EQ(pith_op_define("t_unreg2::f(Tensor x) -> Tensor"), PITH_OK);
    EXPECT_EQ(pith_kernel_unregister("t_unreg2::f", "CPU"), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "t_unreg2::f has no kernel for dispatch key CPU");
    EXPECT_EQ(pith_kernel_unregister("t_nope2::f", "CPU"), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "unknown operator");
}

TEST_F(KernelRegistry, ReRegisterAfterUnregister)
{
    ASSERT_EQ(pith_op_define("t_unreg3::f(Tensor x) -> Tensor"), PITH_OK);
    std::atomic<int> first{0}, second{0};
    ASSERT_EQ(pith_kernel_register("t_unreg3::f", "CPU", identity_kernel, &first), PITH_OK);
    ASSERT_EQ(pith_kernel_unregister("t_unreg3::f", "CPU"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_unreg3::f", "CPU", identity_kernel, &second), PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_unreg3::f"), s), PITH_OK);
    EXPECT_EQ(first.load(), 0);
    EXPECT_EQ(second.load(), 1);
}

TEST_F(KernelRegistry, BareNameRegistersOnTheDefaultOverload)
{
    ASSERT_EQ(pith_op_define("t_bare::f.one(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_op_define("t_bare::f.two(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_bare::f", "CPU", identity_kernel, nullptr), PITH_OK);
    EXPECT_EQ(pith_kernel_register("t_bare::f.one", "CPU", identity_kernel, nullptr),
              PITH_ERR_VALUE);
    EXPECT_EQ(pith_kernel_register("t_bare::f.two", "CPU", identity_kernel, nullptr), PITH_OK);
}

// ---- selection: keys, fallbacks, fallthrough, redispatch ----

TEST_F(Selection, KernelAboveTheBackendRedispatchesBelowItself)
{
    ASSERT_EQ(pith_op_define("t_ag::scale(Tensor x, float s) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_ag::scale", "CPU", scale_kernel, nullptr), PITH_OK);
    KeyLog log;
    ASSERT_EQ(pith_kernel_register("t_ag::scale", "Autograd", redispatch_kernel<kAutograd>, &log),
              PITH_OK);
    TensorPtr x(make_tensor({1, 2}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_stack_push_double(s, 2);
    pith_keys_guard g;
    ASSERT_EQ(pith_keys_include("Autograd", &g), PITH_OK);
    pith_status st = pith_call_boxed(pith_op_find("t_ag::scale"), s);
    pith_keys_restore(&g);
    ASSERT_EQ(st, PITH_OK) << pith_last_error();
    EXPECT_EQ(log.keys, std::vector<std::string>{"Autograd"});
    TensorPtr r(pith_stack_get_tensor(s, 0));
    EXPECT_EQ(tensor_values(r), (std::vector<float>{2, 4}));
}

TEST_F(Selection, KeysNotInTheSetAreNotVisited)
{
    ASSERT_EQ(pith_op_define("t_ag2::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_ag2::f", "CPU", identity_kernel, nullptr), PITH_OK);
    KeyLog log;
    ASSERT_EQ(pith_kernel_register("t_ag2::f", "Autograd", redispatch_kernel<kAutograd>, &log),
              PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_ag2::f"), s), PITH_OK);
    EXPECT_TRUE(log.keys.empty());
}

TEST_F(Selection, CallBelowAnUnknownKeyIsAValueError)
{
    StackPtr s;
    EXPECT_EQ(pith_call_boxed_below(pith_op_find("add"), s, "GPU"), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "unknown dispatch key 'GPU'");
    EXPECT_EQ(pith_call_boxed_below(nullptr, s, "CPU"), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "the operator is NULL");
}

TEST_F(Selection, CallBelowTheBackendFindsNothing)
{
    ASSERT_EQ(pith_op_define("t_below::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_below::f", "CPU", identity_kernel, nullptr), PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    EXPECT_EQ(pith_call_boxed_below(pith_op_find("t_below::f"), s, "CPU"),
              PITH_ERR_NOT_IMPLEMENTED);
    EXPECT_ERROR(PITH_ERR_NOT_IMPLEMENTED, "t_below::f: no kernel to run for the dispatch keys "
                                           "(keys: none)");
}

pith_status counting_fallback(const pith_op *op, pith_stack *s, void *ctx)
{
    static_cast<KeyLog *>(ctx)->keys.push_back(pith_op_name(op));
    return pith_call_boxed_below(op, s, "Autograd");
}

TEST_F(Selection, FallbackRunsForEveryOpAtItsKey)
{
    ASSERT_EQ(pith_op_define("t_fb::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_fb::f", "CPU", identity_kernel, nullptr), PITH_OK);
    KeyLog log;
    ASSERT_EQ(pith_fallback_register("Autograd", counting_fallback, &log), PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_keys_guard g;
    ASSERT_EQ(pith_keys_include("Autograd", &g), PITH_OK);
    pith_status st = pith_call_boxed(pith_op_find("t_fb::f"), s);
    pith_keys_restore(&g);
    ASSERT_EQ(pith_fallback_unregister("Autograd"), PITH_OK);
    ASSERT_EQ(st, PITH_OK) << pith_last_error();
    EXPECT_EQ(log.keys, std::vector<std::string>{"t_fb::f"});
    TensorPtr r(pith_stack_get_tensor(s, 0));
    EXPECT_EQ(r.get(), x.get());
}

TEST_F(Selection, PerOpKernelWinsOverTheFallback)
{
    ASSERT_EQ(pith_op_define("t_fb2::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_fb2::f", "CPU", identity_kernel, nullptr), PITH_OK);
    KeyLog fallback_log, kernel_log;
    ASSERT_EQ(pith_kernel_register("t_fb2::f", "Autograd", redispatch_kernel<kAutograd>,
                                   &kernel_log),
              PITH_OK);
    ASSERT_EQ(pith_fallback_register("Autograd", counting_fallback, &fallback_log), PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_keys_guard g;
    pith_keys_include("Autograd", &g);
    pith_status st = pith_call_boxed(pith_op_find("t_fb2::f"), s);
    pith_keys_restore(&g);
    pith_fallback_unregister("Autograd");
    ASSERT_EQ(st, PITH_OK) << pith_last_error();
    EXPECT_EQ(kernel_log.keys.size(), 1u);
    EXPECT_TRUE(fallback_log.keys.empty());
}

TEST_F(Selection, FallbackRegistrationErrors)
{
    KeyLog log;
    EXPECT_EQ(pith_fallback_register("Nope", counting_fallback, &log), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "unknown dispatch key 'Nope'");
    EXPECT_EQ(pith_fallback_register("Autograd", nullptr, &log), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "the kernel is NULL");
    ASSERT_EQ(pith_fallback_register("Autograd", counting_fallback, &log), PITH_OK);
    EXPECT_EQ(pith_fallback_register("Autograd", counting_fallback, &log), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "dispatch key Autograd already has a fallback");
    ASSERT_EQ(pith_fallback_unregister("Autograd"), PITH_OK);
    EXPECT_EQ(pith_fallback_unregister("Autograd"), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "dispatch key Autograd has no fallback");
    EXPECT_EQ(pith_fallback_unregister(nullptr), PITH_ERR_VALUE);
}

TEST_F(Selection, AutogradIsFallthroughByDefault)
{
    ASSERT_EQ(pith_op_define("t_ft::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_ft::f", "CPU", identity_kernel, nullptr), PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_keys_guard g;
    pith_keys_include("Autograd", &g);
    pith_status st = pith_call_boxed(pith_op_find("t_ft::f"), s);
    pith_keys_restore(&g);
    EXPECT_EQ(st, PITH_OK) << pith_last_error();
}

TEST_F(Selection, NonFallthroughKeyWithoutKernelIsAnError)
{
    ASSERT_EQ(pith_op_define("t_ft2::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_ft2::f", "CPU", identity_kernel, nullptr), PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_keys_guard g;
    pith_keys_include("Meta", &g);
    pith_status st = pith_call_boxed(pith_op_find("t_ft2::f"), s);
    pith_keys_restore(&g);
    EXPECT_EQ(st, PITH_ERR_NOT_IMPLEMENTED);
    EXPECT_ERROR(PITH_ERR_NOT_IMPLEMENTED, "t_ft2::f: no kernel for dispatch key Meta (keys: "
                                           "Meta, CPU)");
}

TEST_F(Selection, FallthroughRegistrationSkipsTheKey)
{
    ASSERT_EQ(pith_op_define("t_ft3::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_ft3::f", "CPU", identity_kernel, nullptr), PITH_OK);
    ASSERT_EQ(pith_fallthrough_register("Meta"), PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_keys_guard g;
    pith_keys_include("Meta", &g);
    pith_status st = pith_call_boxed(pith_op_find("t_ft3::f"), s);
    pith_keys_restore(&g);
    shim_fallthrough_remove("Meta");
    EXPECT_EQ(st, PITH_OK) << pith_last_error();
    EXPECT_EQ(pith_fallthrough_register("Nope"), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "unknown dispatch key 'Nope'");
}

TEST_F(Selection, ExcludingEveryKeyLeavesNothingToRun)
{
    ASSERT_EQ(pith_op_define("t_excl::f(Tensor x) -> Tensor"), PITH_OK);
    ASSERT_EQ(pith_kernel_register("t_excl::f", "CPU", identity_kernel, nullptr), PITH_OK);
    TensorPtr x(make_tensor({1}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_keys_guard g;
    pith_keys_exclude("CPU", &g);
    pith_status st = pith_call_boxed(pith_op_find("t_excl::f"), s);
    pith_keys_restore(&g);
    EXPECT_EQ(st, PITH_ERR_NOT_IMPLEMENTED);
    EXPECT_ERROR(PITH_ERR_NOT_IMPLEMENTED, "(keys: none)");
}

class BackendChoice : public DispatchTest {
protected:
    static void SetUpTestSuite()
    {
        pith_op_define("t_backend::make(int n, *, Device? device=None) -> Tensor");
        pith_kernel_register("t_backend::make", "CPU", logging_kernel<kCPU>, &log);
        pith_kernel_register("t_backend::make", "Meta", logging_kernel<kMeta>, &log);
        pith_op_define("t_backend::cat(Tensor[] xs) -> Tensor");
        pith_kernel_register("t_backend::cat", "CPU", logging_kernel<kCPU>, &log);
        pith_kernel_register("t_backend::cat", "Meta", logging_kernel<kMeta>, &log);
    }
    void SetUp() override
    {
        DispatchTest::SetUp();
        log.keys.clear();
    }
    void TearDown() override
    {
        pith_stack_drop(s, pith_stack_size(s));
        DispatchTest::TearDown();
    }
    static KeyLog log;
    StackPtr s;
};
KeyLog BackendChoice::log;

TEST_F(BackendChoice, FactoryWithoutDeviceRunsOnCpu)
{
    pith_stack_push_int(s, 3);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_backend::make"), s), PITH_OK) << pith_last_error();
    EXPECT_EQ(log.keys, std::vector<std::string>{"CPU"});
}

TEST_F(BackendChoice, FactoryDeviceMetaRunsOnMeta)
{
    pith_stack_push_int(s, 3);
    pith_stack_push_device(s, PITH_META);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_backend::make"), s), PITH_OK) << pith_last_error();
    EXPECT_EQ(log.keys, std::vector<std::string>{"Meta"});
}

TEST_F(BackendChoice, FactoryDeviceCpuRunsOnCpu)
{
    pith_stack_push_int(s, 3);
    pith_stack_push_device(s, PITH_CPU);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_backend::make"), s), PITH_OK) << pith_last_error();
    EXPECT_EQ(log.keys, std::vector<std::string>{"CPU"});
}

TEST_F(BackendChoice, TensorListContributesItsKeys)
{
    TensorPtr a(make_tensor({1})), m(make_meta(2));
    const pith_tensor *list[2] = {a, m};
    pith_stack_push_tensor_list(s, list, 2);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_backend::cat"), s), PITH_OK) << pith_last_error();
    EXPECT_EQ(log.keys, std::vector<std::string>{"Meta"});
}

TEST_F(BackendChoice, EmptyTensorListRunsOnCpu)
{
    pith_stack_push_tensor_list(s, nullptr, 0);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_backend::cat"), s), PITH_OK) << pith_last_error();
    EXPECT_EQ(log.keys, std::vector<std::string>{"CPU"});
}

TEST_F(BackendChoice, CpuTensorListRunsOnCpu)
{
    TensorPtr a(make_tensor({1}));
    const pith_tensor *list[1] = {a};
    pith_stack_push_tensor_list(s, list, 1);
    ASSERT_EQ(pith_call_boxed(pith_op_find("t_backend::cat"), s), PITH_OK) << pith_last_error();
    EXPECT_EQ(log.keys, std::vector<std::string>{"CPU"});
}

// A boxed kernel above the backend of a built-in op is reached from the typed C API too.
// (PythonMode: the Autograd slot of a built-in op holds its generated autograd kernel.)
TEST_F(Selection, TypedCallReachesABoxedKernel)
{
    KeyLog log;
    ASSERT_EQ(pith_kernel_register("add", "PythonMode", redispatch_kernel<kPythonMode>, &log),
              PITH_OK);
    TensorPtr a(make_tensor({1, 2})), b(make_tensor({3, 4}));
    pith_keys_guard g;
    pith_keys_include("PythonMode", &g);
    TensorPtr r(pith_add(a, b));
    pith_keys_restore(&g);
    ASSERT_EQ(pith_kernel_unregister("add", "PythonMode"), PITH_OK);
    ASSERT_NE(r.get(), nullptr) << pith_last_error();
    EXPECT_EQ(log.keys, std::vector<std::string>{"PythonMode"});
    EXPECT_EQ(tensor_values(r), (std::vector<float>{4, 6}));
}

// ---- boxing of typed calls: a boxed kernel above the backend sees every argument ----

struct KindsLog {
    std::vector<pith_value_kind> kinds;
    std::string str;
};
pith_status kinds_then_below(const pith_op *op, pith_stack *s, void *ctx)
{
    auto *log = static_cast<KindsLog *>(ctx);
    log->kinds.clear();
    for (size_t i = 0; i < pith_stack_size(s); i++) {
        log->kinds.push_back(pith_stack_kind(s, i));
        if (log->kinds.back() == PITH_VALUE_STRING)
            log->str = pith_stack_get_string(s, i);
    }
    return pith_call_boxed_below(op, s, "PythonMode");
}

class TypedBoxing : public DispatchTest {
protected:
    KindsLog log;
    pith_keys_guard guard{};
    // Puts a boxed recorder at PythonMode on `op` and includes PythonMode (the Autograd
    // slot of a built-in op holds its generated autograd kernel).
    void intercept(const char *op)
    {
        op_ = op;
        ASSERT_EQ(pith_kernel_register(op, "PythonMode", kinds_then_below, &log), PITH_OK);
        pith_keys_include("PythonMode", &guard);
    }
    void TearDown() override
    {
        pith_keys_restore(&guard);
        if (op_) {
            EXPECT_EQ(pith_kernel_unregister(op_, "PythonMode"), PITH_OK);
        }
        DispatchTest::TearDown();
    }

private:
    const char *op_ = nullptr;
};

TEST_F(TypedBoxing, StringArgument)
{
    intercept("gelu");
    TensorPtr x(make_tensor({0, 1}));
    TensorPtr r(pith_gelu(x, true));
    ASSERT_NE(r.get(), nullptr) << pith_last_error();
    EXPECT_EQ(log.kinds, (std::vector<pith_value_kind>{PITH_VALUE_TENSOR, PITH_VALUE_STRING}));
    EXPECT_EQ(log.str, "tanh");
}

TEST_F(TypedBoxing, OptionalScalars)
{
    intercept("clamp");
    TensorPtr x(make_tensor({-1, 5}));
    double lo = 0;
    TensorPtr r(pith_clamp(x, &lo, nullptr));
    ASSERT_NE(r.get(), nullptr) << pith_last_error();
    ASSERT_EQ(log.kinds.size(), 3u);
    EXPECT_NE(log.kinds[1], PITH_VALUE_NONE);
    EXPECT_EQ(log.kinds[2], PITH_VALUE_NONE);
    EXPECT_EQ(tensor_values(r), (std::vector<float>{0, 5}));
}

TEST_F(TypedBoxing, IntListBoolAndOptionalDtype)
{
    intercept("sum.dim_IntList");
    int64_t sizes[2] = {2, 2};
    float data[4] = {1, 2, 3, 4};
    TensorPtr x(pith_from_data(data, 2, sizes, PITH_FLOAT32));
    int dims[1] = {1};
    TensorPtr r(pith_sum(x, 1, dims, false));
    ASSERT_NE(r.get(), nullptr) << pith_last_error();
    EXPECT_EQ(log.kinds, (std::vector<pith_value_kind>{PITH_VALUE_TENSOR, PITH_VALUE_INT_LIST,
                                                       PITH_VALUE_BOOL, PITH_VALUE_NONE}));
    EXPECT_EQ(tensor_values(r), (std::vector<float>{3, 7}));
}

// ---- boxed calls of built-ins with other result and argument kinds ----

TEST_F(BoxedCall, TensorListResultIsOneValue)
{
    TensorPtr x(make_tensor({1, 2, 3}));
    StackPtr s;
    pith_stack_push_tensor(s, x);
    pith_stack_push_int(s, 2);
    ASSERT_EQ(pith_call_boxed(pith_op_find("split"), s), PITH_OK) << pith_last_error();
    ASSERT_EQ(pith_stack_size(s), 1u);
    ASSERT_EQ(pith_stack_kind(s, 0), PITH_VALUE_TENSOR_LIST);
    size_t n = 0;
    pith_tensor *const *parts = pith_stack_get_tensor_list(s, 0, &n);
    ASSERT_EQ(n, 2u);
    EXPECT_EQ(tensor_values(parts[0]), (std::vector<float>{1, 2}));
    EXPECT_EQ(tensor_values(parts[1]), (std::vector<float>{3}));
}

TEST_F(BoxedCall, FactoryDeviceArgumentPicksTheBackend)
{
    int64_t size[1] = {3};
    StackPtr s;
    pith_stack_push_int_list(s, size, 1);
    pith_stack_push_none(s);
    pith_stack_push_device(s, PITH_META);
    ASSERT_EQ(pith_call_boxed(pith_op_find("zeros"), s), PITH_OK) << pith_last_error();
    TensorPtr r(pith_stack_get_tensor(s, 0));
    EXPECT_EQ(pith_tensor_device(r), PITH_META);
    EXPECT_EQ(pith_numel(r), 3);
}

TEST_F(BoxedCall, FactoryWithoutDeviceIsCpu)
{
    int64_t size[1] = {2};
    StackPtr s;
    pith_stack_push_int_list(s, size, 1);
    ASSERT_EQ(pith_call_boxed(pith_op_find("ones"), s), PITH_OK) << pith_last_error();
    TensorPtr r(pith_stack_get_tensor(s, 0));
    EXPECT_EQ(pith_tensor_device(r), PITH_CPU);
    EXPECT_EQ(tensor_values(r), (std::vector<float>{1, 1}));
}

TEST_F(OpFind, EveryOpIsFoundByItsOwnName)
{
    for (size_t i = 0; i < pith_op_count(); i++) {
        const pith_op *op = pith_op_at(i);
        EXPECT_EQ(pith_op_find(pith_op_name(op)), op) << pith_op_name(op);
    }
}

} // namespace
