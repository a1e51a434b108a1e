// promotion_test.cc — type promotion checked against the tables read off PyTorch
// (tests/data/promotion.csv, op_result_dtypes.csv), through the public ops.
#include "common/oracle_table.h"
#include "elementwise_util.h"

namespace {

std::vector<std::vector<std::string>> read_csv(const std::string &name)
{
    return pith_test::ReadOracleTable(name).rows;
}

pith_dtype dtype_named(const std::string &name)
{
    pith_dtype d = PITH_FLOAT32;
    EXPECT_TRUE(pith_dtype_from_name(name.c_str(), &d)) << name;
    return d;
}

// The right operand of a promotion.csv row: a dimensioned tensor, a 0-dim tensor, or a
// Python scalar (a wrapped number of the Python type's dtype).
Tensor rhs_operand(const std::string &kind, const std::string &type)
{
    if (kind == "tensor") return make({2}, dtype_named(type), {1, 1});
    if (kind == "0dim") return make_scalar(dtype_named(type), 1);
    EXPECT_EQ(kind, "scalar");
    if (type == "bool") return make_wrapped(PITH_BOOL, 1);
    if (type == "int") return make_wrapped(PITH_INT64, 1);
    EXPECT_EQ(type, "float");
    return make_wrapped(PITH_FLOAT64, 1);
}

using PromotionTest = ElementwiseTest;

TEST_F(PromotionTest, PromoteTypesMatchesTheTensorRowsOfTheTable)
{
    int checked = 0;
    for (const auto &row : read_csv("promotion.csv")) {
        if (row[0] != "tensor" || row[2] != "tensor") continue;
        EXPECT_EQ(pith_promote_types(dtype_named(row[1]), dtype_named(row[3])), dtype_named(row[4]))
            << row[1] << " with " << row[3];
        checked++;
    }
    EXPECT_EQ(checked, 100);
}

TEST_F(PromotionTest, PromoteTypesOfAnInvalidDtypeIsATypeError)
{
    EXPECT_ERROR(pith_promote_types((pith_dtype)42, PITH_FLOAT32), PITH_ERR_TYPE, "invalid dtype");
}

TEST_F(PromotionTest, AddResultDtypeMatchesEveryRowOfTheTable)
{
    int checked = 0;
    for (const auto &row : read_csv("promotion.csv")) {
        Tensor lhs = make({2}, dtype_named(row[1]), {1, 1});
        Tensor rhs = rhs_operand(row[2], row[3]);
        Tensor out(pith_add(lhs.get(), rhs.get()));
        ASSERT_NE(out, nullptr) << pith_last_error();
        EXPECT_EQ(pith_tensor_dtype(out.get()), dtype_named(row[4]))
            << row[1] << " + " << row[2] << " " << row[3];
        checked++;
    }
    EXPECT_EQ(checked, 230);
}

TEST_F(PromotionTest, PromotionIsSymmetricInTheOperandOrder)
{
    for (const auto &row : read_csv("promotion.csv")) {
        Tensor lhs = make({2}, dtype_named(row[1]), {1, 1});
        Tensor rhs = rhs_operand(row[2], row[3]);
        Tensor out(pith_mul(rhs.get(), lhs.get()));
        ASSERT_NE(out, nullptr) << pith_last_error();
        EXPECT_EQ(pith_tensor_dtype(out.get()), dtype_named(row[4]))
            << row[2] << " " << row[3] << " * " << row[1];
    }
}

TEST_F(PromotionTest, MetaKernelsPromoteLikeCpuKernels)
{
    for (const auto &row : read_csv("promotion.csv")) {
        Tensor lhs = make_meta({2}, dtype_named(row[1]));
        Tensor rhs = row[2] == "tensor" ? make_meta({2}, dtype_named(row[3])) : rhs_operand(row[2], row[3]);
        Tensor out(pith_add(lhs.get(), rhs.get()));
        ASSERT_NE(out, nullptr) << pith_last_error();
        EXPECT_EQ(pith_tensor_device(out.get()), PITH_META);
        EXPECT_EQ(pith_tensor_dtype(out.get()), dtype_named(row[4]));
    }
}

TEST_F(PromotionTest, ZeroDimOfHigherCategoryKeepsItsOwnDtype)
{
    Tensor a = make({2}, PITH_INT32, {1, 2});
    Tensor b = make_scalar(PITH_FLOAT64, 0.5);
    Tensor out(pith_add(a.get(), b.get()));
    EXPECT_EQ(pith_tensor_dtype(out.get()), PITH_FLOAT64);
}

TEST_F(PromotionTest, WrappedFloatOfHigherCategoryGivesTheDefaultDtype)
{
    Tensor a = make({2}, PITH_INT32, {1, 2});
    Tensor b = make_wrapped(PITH_FLOAT64, 0.5);
    Tensor out(pith_add(a.get(), b.get()));
    EXPECT_EQ(pith_tensor_dtype(out.get()), PITH_FLOAT32);
    EXPECT_VALUES(PITH_FLOAT32, out.get(), (std::vector<double>{1.5, 2.5}));
}

TEST_F(PromotionTest, TwoZeroDimTensorsPromoteNormally)
{
    Tensor a = make_scalar(PITH_INT8, 1);
    Tensor b = make_scalar(PITH_UINT8, 2);
    Tensor out(pith_add(a.get(), b.get()));
    EXPECT_EQ(pith_tensor_dtype(out.get()), PITH_INT16);
    EXPECT_EQ(pith_ndim(out.get()), 0);
}

TEST_F(PromotionTest, ZeroDimBeatsWrappedNumberOfTheSameCategory)
{
    Tensor a = make_scalar(PITH_FLOAT16, 1);
    Tensor b = make_wrapped(PITH_FLOAT64, 2);
    Tensor out(pith_add(a.get(), b.get()));
    EXPECT_EQ(pith_tensor_dtype(out.get()), PITH_FLOAT16);
}

// op_result_dtypes.csv: the columns of elementwise ops ("error": PyTorch refuses the dtype).
TEST_F(PromotionTest, OpResultDtypesMatchTheTable)
{
    struct Column {
        const char *name;
        pith_tensor *(*run)(const pith_tensor *);
    };
    static pith_tensor *(*const true_div)(const pith_tensor *) = [](const pith_tensor *x) { return pith_div(x, x); };
    static pith_tensor *(*const floor_div)(const pith_tensor *) = [](const pith_tensor *x) { return pith_floor_divide(x, x); };
    static pith_tensor *(*const eq)(const pith_tensor *) = [](const pith_tensor *x) { return pith_eq(x, x); };
    const Column columns[] = {{"true_div", true_div}, {"exp", pith_exp}, {"neg", pith_neg},
                              {"floor_divide", floor_div}, {"eq", eq}};
    pith_test::OracleTable table = pith_test::ReadOracleTable("op_result_dtypes.csv");
    int checked = 0;
    for (const auto &row : table.rows) {
        pith_dtype in = dtype_named(row[0]);
        for (const Column &c : columns) {
            const std::string &want = row.at(table.column(c.name));
            Tensor x = make({3}, in, {1, 2, 3});
            pith_clear_error();
            Tensor out(c.run(x.get()));
            if (want == "error") {
                EXPECT_EQ(out, nullptr) << c.name << " of " << row[0];
                EXPECT_EQ(pith_last_status(), PITH_ERR_TYPE) << c.name << " of " << row[0];
            } else {
                ASSERT_NE(out, nullptr) << c.name << " of " << row[0] << ": " << pith_last_error();
                EXPECT_EQ(pith_tensor_dtype(out.get()), dtype_named(want)) << c.name << " of " << row[0];
            }
            checked++;
        }
    }
    EXPECT_EQ(checked, 50);
}

TEST_F(PromotionTest, OutputThatCannotHoldTheResultIsATypeError)
{
    Tensor a = make({2}, PITH_FLOAT32, {1, 2});
    Tensor out = make({2}, PITH_INT64, {0, 0});
    EXPECT_ERROR(pith_add_out(out.get(), a.get(), a.get()), PITH_ERR_TYPE,
                 "result type float32 can't be cast to the desired output type int64");
}

TEST_F(PromotionTest, NonBoolResultCannotBeWrittenToABoolOutput)
{
    Tensor a = make({2}, PITH_INT32, {1, 2});
    Tensor out = make({2}, PITH_BOOL, {0, 0});
    EXPECT_ERROR(pith_add_out(out.get(), a.get(), a.get()), PITH_ERR_TYPE, "can't be cast");
}

TEST_F(PromotionTest, ComparisonResultCanBeWrittenToAnyOutputDtype)
{
    Tensor a = make({3}, PITH_FLOAT32, {1, 2, 3});
    Tensor b = make({3}, PITH_FLOAT32, {1, 0, 3});
    for (pith_dtype d : kAllDtypes) {
        Tensor out = make({3}, d, {7, 7, 7});
        ASSERT_EQ(pith_eq_out(out.get(), a.get(), b.get()), PITH_OK) << pith_last_error();
        EXPECT_VALUES(d, out.get(), (std::vector<double>{1, 0, 1}));
    }
}

TEST_F(PromotionTest, IntegerResultIntoAFloatOutputIsConverted)
{
    Tensor a = make({2}, PITH_INT64, {3, 5});
    Tensor out = make({2}, PITH_FLOAT16, {0, 0});
    ASSERT_EQ(pith_mul_out(out.get(), a.get(), a.get()), PITH_OK);
    EXPECT_VALUES(PITH_FLOAT16, out.get(), (std::vector<double>{9, 25}));
}

} // namespace
