// The op table as a whole: every row registered, with a CPU and a Meta kernel, under a name
// that resolves back to it. See Note [The op file] in ops/ops.toml.
#include <gtest/gtest.h>

#include <string>

#include "pith/pith.h"

extern "C" {
int shim_builtin_op_count(void);
const pith_op *shim_builtin_op(int i);
bool shim_op_has_kernel(const pith_op *op, const char *key);
}

TEST(OpTable, EveryRowIsRegistered)
{
    ASSERT_GT(shim_builtin_op_count(), 100);
    for (int i = 0; i < shim_builtin_op_count(); i++)
        EXPECT_NE(shim_builtin_op(i), nullptr) << "row " << i;
}

TEST(OpTable, EveryOpHasACpuAndAMetaKernel)
{
    for (int i = 0; i < shim_builtin_op_count(); i++) {
        const pith_op *op = shim_builtin_op(i);
        ASSERT_NE(op, nullptr);
        EXPECT_TRUE(shim_op_has_kernel(op, "CPU")) << pith_op_name(op);
        EXPECT_TRUE(shim_op_has_kernel(op, "Meta")) << pith_op_name(op);
    }
}

TEST(OpTable, EveryQualifiedNameFindsItsOp)
{
    for (int i = 0; i < shim_builtin_op_count(); i++) {
        const pith_op *op = shim_builtin_op(i);
        ASSERT_NE(op, nullptr);
        EXPECT_EQ(pith_op_find(pith_op_name(op)), op) << pith_op_name(op);
        std::string schema = pith_op_schema(op);
        EXPECT_NE(schema.find("->"), std::string::npos) << schema;
    }
}

TEST(OpTable, BareNamesResolveToTheDefaultOverload)
{
    EXPECT_EQ(pith_op_find("add"), pith_op_find("add.Tensor"));
    EXPECT_EQ(pith_op_find("split"), pith_op_find("split.Tensor"));
    EXPECT_EQ(pith_op_find("sum"), pith_op_find("pith::sum"));  // the empty overload wins
    EXPECT_EQ(pith_op_find("max"), pith_op_find("pith::max"));  // the empty overload wins
    EXPECT_NE(pith_op_find("max"), pith_op_find("max.dim"));
    EXPECT_EQ(pith_op_find("no_such_op"), nullptr);
}

TEST(OpTable, BuiltinOpsAreInThePithNamespace)
{
    EXPECT_STREQ(pith_op_name(pith_op_find("add")), "pith::add.Tensor");
    EXPECT_STREQ(pith_op_name(pith_op_find("relu")), "pith::relu");
}
