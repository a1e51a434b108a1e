// op_info_test.cc — the public view of a parsed schema (pith/schema.h): names, arguments,
// returns and defaults, as the Python binder reads them.
#include <string>

#include "test_util.h"

namespace {

using OpInfo = DispatchTest;

TEST_F(OpInfo, NamePartsOfABuiltinOverload)
{
    const pith_op *op = pith_op_find("add.Tensor");
    ASSERT_NE(op, nullptr);
    EXPECT_STREQ(pith_op_namespace(op), "pith");
    EXPECT_STREQ(pith_op_base_name(op), "add");
    EXPECT_STREQ(pith_op_overload_name(op), "Tensor");
    EXPECT_STREQ(pith_op_overload_name(pith_op_find("matmul")), "");
}

TEST_F(OpInfo, ArgumentsCarryTypeKeywordOnlyDefaultAndMutability)
{
    const pith_op *op = pith_op_find("add.out");
    ASSERT_NE(op, nullptr);
    ASSERT_EQ(pith_op_num_arguments(op), 4);
    pith_argument a;
    ASSERT_EQ(pith_op_argument(op, 0, &a), PITH_OK);
    EXPECT_STREQ(a.name, "self");
    EXPECT_EQ(a.type, PITH_TYPE_TENSOR);
    EXPECT_FALSE(a.kwarg_only);
    EXPECT_FALSE(a.has_default);
    ASSERT_EQ(pith_op_argument(op, 2, &a), PITH_OK);
    EXPECT_STREQ(a.name, "alpha");
    EXPECT_EQ(a.type, PITH_TYPE_SCALAR);
    EXPECT_TRUE(a.kwarg_only);
    EXPECT_TRUE(a.has_default);
    ASSERT_EQ(pith_op_argument(op, 3, &a), PITH_OK);
    EXPECT_STREQ(a.name, "out");
    EXPECT_TRUE(a.is_mutable);
    EXPECT_EQ(a.alias_set, 'a');
    EXPECT_STREQ(pith_arg_type_name(a.type), "Tensor");
}

TEST_F(OpInfo, ReturnsAreNamedWhenTheSchemaNamesThem)
{
    const pith_op *op = pith_op_find("max.dim");
    ASSERT_EQ(pith_op_num_returns(op), 2);
    pith_argument r;
    ASSERT_EQ(pith_op_return(op, 1, &r), PITH_OK);
    EXPECT_STREQ(r.name, "indices");
    ASSERT_EQ(pith_op_return(pith_op_find("add.out"), 0, &r), PITH_OK);
    EXPECT_EQ(r.name, nullptr);
    EXPECT_TRUE(r.is_mutable);
}

TEST_F(OpInfo, PushDefaultPushesACopyOfTheSchemaDefault)
{
    const pith_op *op = pith_op_find("flatten");
    StackPtr s;
    ASSERT_EQ(pith_op_push_default(op, 2, s), PITH_OK);
    ASSERT_EQ(pith_stack_size(s), 1u);
    EXPECT_EQ(pith_stack_kind(s, 0), PITH_VALUE_INT);
    EXPECT_EQ(pith_stack_get_int(s, 0), -1);
    ASSERT_EQ(pith_op_push_default(pith_op_find("gelu"), 1, s), PITH_OK);
    EXPECT_STREQ(pith_stack_get_string(s, 1), "none");
}

TEST_F(OpInfo, PushDefaultOfAnArgumentWithoutOneIsAValueError)
{
    StackPtr s;
    EXPECT_EQ(pith_op_push_default(pith_op_find("add.Tensor"), 0, s), PITH_ERR_VALUE);
    EXPECT_TRUE(pith_test::HasError(PITH_ERR_VALUE, "has no default"));
    EXPECT_EQ(pith_stack_size(s), 0u);
}

TEST_F(OpInfo, AnIndexOutOfRangeIsAnIndexError)
{
    const pith_op *op = pith_op_find("add.Tensor");
    pith_argument a;
    EXPECT_EQ(pith_op_argument(op, 3, &a), PITH_ERR_INDEX);
    EXPECT_EQ(pith_op_argument(op, -1, &a), PITH_ERR_INDEX);
    EXPECT_EQ(pith_op_return(op, 1, &a), PITH_ERR_INDEX);
    StackPtr s;
    EXPECT_EQ(pith_op_push_default(op, 9, s), PITH_ERR_INDEX);
}

TEST_F(OpInfo, ANullOpIsAValueErrorNeverACrash)
{
    pith_argument a;
    EXPECT_EQ(pith_op_num_arguments(nullptr), -1);
    EXPECT_EQ(pith_op_num_returns(nullptr), -1);
    EXPECT_EQ(pith_op_namespace(nullptr), nullptr);
    EXPECT_EQ(pith_op_argument(nullptr, 0, &a), PITH_ERR_VALUE);
    EXPECT_EQ(pith_op_argument(pith_op_find("add.Tensor"), 0, nullptr), PITH_ERR_VALUE);
    EXPECT_STREQ(pith_arg_type_name((pith_arg_type)99), "unknown");
}

TEST_F(OpInfo, ACustomOpIsDescribedLikeABuiltinOne)
{
    ASSERT_EQ(pith_op_define("opinfo::join(Tensor x, str sep=\",\", *, int[] dims=[]) -> Tensor"),
              PITH_OK) << pith_last_error();
    const pith_op *op = pith_op_find("opinfo::join");
    EXPECT_STREQ(pith_op_namespace(op), "opinfo");
    pith_argument a;
    ASSERT_EQ(pith_op_argument(op, 1, &a), PITH_OK);
    EXPECT_EQ(a.type, PITH_TYPE_STR);
    StackPtr s;
    ASSERT_EQ(pith_op_push_default(op, 1, s), PITH_OK);
    EXPECT_STREQ(pith_stack_get_string(s, 0), ",");
    ASSERT_EQ(pith_op_push_default(op, 2, s), PITH_OK);
    size_t n = 99;
    pith_stack_get_int_list(s, 1, &n);
    EXPECT_EQ(n, 0u);
}

TEST_F(OpInfo, SizedListsKeepTheirSizeAndRepeatAScalarDefault)
{
    ASSERT_EQ(pith_op_define("opinfo::sized(Tensor x, int[2] stride=1, float[3] scale=0.5, "
                             "float[]? w=None, int[] dims=[]) -> Tensor"),
              PITH_OK) << pith_last_error();
    const pith_op *op = pith_op_find("opinfo::sized");
    pith_argument a;
    ASSERT_EQ(pith_op_argument(op, 1, &a), PITH_OK);
    EXPECT_EQ(a.type, PITH_TYPE_INT_LIST);
    EXPECT_EQ(a.list_size, 2);
    ASSERT_EQ(pith_op_argument(op, 2, &a), PITH_OK);
    EXPECT_EQ(a.type, PITH_TYPE_FLOAT_LIST);
    EXPECT_EQ(a.list_size, 3);
    ASSERT_EQ(pith_op_argument(op, 3, &a), PITH_OK);
    EXPECT_EQ(a.type, PITH_TYPE_OPT_FLOAT_LIST);
    ASSERT_EQ(pith_op_argument(op, 4, &a), PITH_OK);
    EXPECT_EQ(a.list_size, 0);
    StackPtr s;
    ASSERT_EQ(pith_op_push_default(op, 2, s), PITH_OK);
    size_t n = 0;
    const double *d = pith_stack_get_double_list(s, 0, &n);
    ASSERT_EQ(n, 3u);
    EXPECT_EQ(d[0], 0.5);
    EXPECT_EQ(d[2], 0.5);
    ASSERT_EQ(pith_op_push_default(op, 3, s), PITH_OK);
    EXPECT_EQ(pith_stack_kind(s, 1), PITH_VALUE_NONE);
}

TEST_F(OpInfo, OptionalBoolStrAndGeneratorArguments)
{
    ASSERT_EQ(pith_op_define("opinfo::opts(Tensor x, bool? stable=None, bool? flag=True, "
                             "str? mode='ij', *, Generator? generator=None) -> Tensor"),
              PITH_OK) << pith_last_error();
    const pith_op *op = pith_op_find("opinfo::opts");
    const pith_arg_type want[] = {PITH_TYPE_TENSOR, PITH_TYPE_OPT_BOOL, PITH_TYPE_OPT_BOOL,
                                  PITH_TYPE_OPT_STR, PITH_TYPE_OPT_GENERATOR};
    for (int i = 0; i < 5; i++) {
        pith_argument a;
        ASSERT_EQ(pith_op_argument(op, i, &a), PITH_OK);
        EXPECT_EQ(a.type, want[i]) << i;
        EXPECT_EQ(pith_arg_type_is_optional(a.type), i > 0) << i;
    }
    StackPtr s;
    ASSERT_EQ(pith_op_push_default(op, 2, s), PITH_OK);
    EXPECT_TRUE(pith_stack_get_bool(s, 0));
    ASSERT_EQ(pith_op_push_default(op, 3, s), PITH_OK);
    EXPECT_STREQ(pith_stack_get_string(s, 1), "ij");
    ASSERT_EQ(pith_op_push_default(op, 4, s), PITH_OK);
    EXPECT_EQ(pith_stack_kind(s, 2), PITH_VALUE_NONE);
    // A generator default other than None, and a sized list of another type, are refused.
    EXPECT_EQ(pith_op_define("opinfo::badgen(Generator? g=3) -> Tensor"), PITH_ERR_VALUE);
    EXPECT_EQ(pith_op_define("opinfo::badsize(int[1001] x) -> Tensor"), PITH_ERR_VALUE);
}

TEST_F(OpInfo, GeneratorsOnTheStackAreRetainedAndShared)
{
    pith_generator *g = pith_generator_new(7);
    ASSERT_NE(g, nullptr);
    StackPtr s;
    ASSERT_EQ(pith_stack_push_generator(s, g), PITH_OK);
    pith_generator_release(g); // the stack's reference keeps it alive
    pith_generator *got = pith_stack_get_generator(s, 0);
    ASSERT_EQ(got, g);
    EXPECT_EQ(pith_generator_initial_seed(got), 7u);
    ASSERT_EQ(pith_stack_push_generator(s, nullptr), PITH_OK);
    EXPECT_EQ(pith_stack_get_generator(s, 1), pith_default_generator());
    EXPECT_EQ(pith_stack_get_generator(s, 5), nullptr);
    EXPECT_TRUE(pith_test::HasError(PITH_ERR_INDEX, "out of range"));
    ASSERT_EQ(pith_stack_push_int(s, 1), PITH_OK);
    EXPECT_EQ(pith_stack_get_generator(s, 2), nullptr);
    EXPECT_TRUE(pith_test::HasError(PITH_ERR_TYPE, "not Generator"));
}

} // namespace
