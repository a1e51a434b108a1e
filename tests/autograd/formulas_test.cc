// formulas_test.cc — the generated autograd kernels and nodes (autograd/generated/, written
// by scripts/gen_autograd.py from the op file's derivatives section) through the public C
// API: each op's gradient against central differences in float64, the node's name against
// the generated table, double backward, in-place and out= forms, and a second backward.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gradient_check.h"
#include "live_nodes.h"

namespace {

using gradient_check::CallOne;
using gradient_check::ExpectGradients;
using gradient_check::ExpectGradientsNamed;
using gradient_check::Ints;
using gradient_check::NodeNameOf;
using gradient_check::Raw;
using gradient_check::Sample;
using pith_test::HasError;
using pith_test::Tensor;
using pith_test::Values;

using Formulas = LiveNodesFixture;

TEST_F(Formulas, AddGivesGradToBothAndSumsTheBroadcastOne)
{
    Tensor a = Sample({3, 4}), b = Sample({4});
    ExpectGradients([](auto &x) { return pith_add(x[0], x[1]); }, Raw({&a, &b}), "add.Tensor");
}

TEST_F(Formulas, MulSavesBothInputs)
{
    Tensor a = Sample({3, 4}), b = Sample({3, 1}, 0.5, 2.0);
    ExpectGradients([](auto &x) { return pith_mul(x[0], x[1]); }, Raw({&a, &b}), "mul.Tensor");
}

TEST_F(Formulas, DivSavesTheResult)
{
    Tensor a = Sample({2, 3}), b = Sample({2, 3}, 0.5, 2.0);
    ExpectGradients([](auto &x) { return pith_div(x[0], x[1]); }, Raw({&a, &b}), "div.Tensor");
}

TEST_F(Formulas, ExpSavesTheResult)
{
    Tensor a = Sample({5});
    ExpectGradients([](auto &x) { return pith_exp(x[0]); }, Raw({&a}), "exp");
}

TEST_F(Formulas, PowOfTwoTensors)
{
    Tensor a = Sample({2, 3}, 0.5, 2.0), b = Sample({3}, -1.0, 2.0);
    ExpectGradients([](auto &x) { return pith_pow(x[0], x[1]); }, Raw({&a, &b}),
                    "pow.Tensor_Tensor");
}

TEST_F(Formulas, ReluPassesTheGradientWherePositive)
{
    Tensor a = Sample({3, 4});
    ExpectGradients([](auto &x) { return pith_relu(x[0]); }, Raw({&a}), "relu");
}

TEST_F(Formulas, SumOverDimsExpandsTheGradientBack)
{
    Tensor a = Sample({2, 3, 4});
    int dims[] = {0, 2};
    ExpectGradients([&](auto &x) { return pith_sum(x[0], 2, dims, false); }, Raw({&a}),
                    "sum.dim_IntList");
}

TEST_F(Formulas, SumOfEverythingKeepingDims)
{
    Tensor a = Sample({3, 2});
    ExpectGradients([](auto &x) { return pith_sum(x[0], 0, nullptr, true); }, Raw({&a}),
                    "sum.dim_IntList");
}

/* A dim-less reduction (sum(x), mean(x), prod(x): PyTorch's overloads without dims, which
 * the C API's pith_sum does not call) of x, boxed. */
pith_tensor *Whole(const char *op, pith_tensor *x)
{
    return CallOne(op, [&](pith_stack *s) {
        pith_stack_push_tensor(s, x);
        pith_stack_push_none(s);
    });
}

TEST_F(Formulas, SumOfEveryElementIsSumBackward0)
{
    Tensor a = Sample({3, 4});
    ExpectGradientsNamed([](auto &x) { return Whole("sum", x[0]); }, Raw({&a}), "SumBackward0",
                         "sum");
    EXPECT_EQ(NodeNameOf("sum"), "SumBackward0");
    EXPECT_EQ(NodeNameOf("sum.dim_IntList"), "SumBackward1");
}

TEST_F(Formulas, MeanOfEveryElementIsMeanBackward0)
{
    Tensor a = Sample({2, 3, 2}), scalar = Sample({});
    ExpectGradientsNamed([](auto &x) { return Whole("mean", x[0]); }, Raw({&a}), "MeanBackward0",
                         "mean");
    ExpectGradientsNamed([](auto &x) { return Whole("mean", x[0]); }, Raw({&scalar}),
                         "MeanBackward0", "mean of a 0-dim tensor");
}

TEST_F(Formulas, ProdOfEveryElementIsProdBackward0WithZerosToo)
{
    Tensor a = Sample({2, 3}, 0.5, 2.0);
    ExpectGradientsNamed([](auto &x) { return Whole("prod", x[0]); }, Raw({&a}), "ProdBackward0",
                         "prod");
    std::vector<double> one_zero = {1.5, 0, 2, -1}, two_zeros = {0, 3, 0, 2};
    for (const auto &values : {one_zero, two_zeros}) {
        int64_t sizes[] = {4};
        Tensor z(pith_from_data(values.data(), 1, sizes, PITH_FLOAT64));
        ASSERT_EQ(pith_set_requires_grad(z.get(), true), PITH_OK);
        ExpectGradientsNamed([](auto &x) { return Whole("prod", x[0]); }, Raw({&z}),
                             "ProdBackward0", "prod with zeros");
    }
}

TEST_F(Formulas, MeanDividesByTheCount)
{
    Tensor a = Sample({3, 4});
    int dims[] = {-1};
    ExpectGradients([&](auto &x) { return pith_mean(x[0], 1, dims, true); }, Raw({&a}),
                    "mean.dim");
}

TEST_F(Formulas, MmOfTwoMatrices)
{
    Tensor a = Sample({3, 4}), b = Sample({4, 2});
    ExpectGradients([](auto &x) { return pith_mm(x[0], x[1]); }, Raw({&a, &b}), "mm");
}

TEST_F(Formulas, MatmulOfAVectorAndABatch)
{
    Tensor a = Sample({4}), b = Sample({2, 4, 3});
    ExpectGradients([](auto &x) { return pith_matmul(x[0], x[1]); }, Raw({&a, &b}), "matmul");
}

TEST_F(Formulas, MatmulBroadcastsBatchDimensions)
{
    Tensor a = Sample({2, 1, 3, 4}), b = Sample({5, 4, 2});
    ExpectGradients([](auto &x) { return pith_matmul(x[0], x[1]); }, Raw({&a, &b}), "matmul");
}

TEST_F(Formulas, SoftmaxAlongADim)
{
    Tensor a = Sample({3, 4});
    ExpectGradients([](auto &x) { return pith_softmax(x[0], 1); }, Raw({&a}), "softmax.int");
}

TEST_F(Formulas, LogSoftmaxAlongTheFirstDim)
{
    Tensor a = Sample({3, 4});
    ExpectGradients([](auto &x) { return pith_log_softmax(x[0], 0); }, Raw({&a}),
                    "log_softmax.int");
}

TEST_F(Formulas, CatGivesEachInputItsSlice)
{
    Tensor a = Sample({2, 3}), b = Sample({2, 1}), c = Sample({2, 2});
    ExpectGradients(
        [](auto &x) {
            const pith_tensor *list[] = {x[0], x[1], x[2]};
            return pith_cat(list, 3, -1);
        },
        Raw({&a, &b, &c}), "cat");
}

TEST_F(Formulas, IndexWithRepeatedPositionsAccumulates)
{
    Tensor a = Sample({4, 3});
    Tensor index = Ints({4}, {0, 2, 2, 3});
    ExpectGradients(
        [&](auto &x) {
            const pith_tensor *indices[] = {index.get()};
            return pith_index(x[0], indices, 1);
        },
        Raw({&a}), "index.Tensor");
}

TEST_F(Formulas, GatherAlongTheLastDim)
{
    Tensor a = Sample({3, 4});
    Tensor index = Ints({3, 2}, {0, 3, 1, 1, 2, 0});
    ExpectGradients([&](auto &x) { return pith_gather(x[0], 1, index.get()); }, Raw({&a}),
                    "gather");
}

TEST_F(Formulas, ExpandSumsTheGradientBack)
{
    Tensor a = Sample({3, 1});
    int64_t sizes[] = {2, 3, 4};
    ExpectGradients([&](auto &x) { return pith_expand(x[0], 3, sizes); }, Raw({&a}), "expand");
}

TEST_F(Formulas, ViewReshapesTheGradient)
{
    Tensor a = Sample({3, 4});
    int64_t sizes[] = {2, 6};
    ExpectGradients([&](auto &x) { return pith_view(x[0], 2, sizes); }, Raw({&a}), "view");
}

TEST_F(Formulas, TransposeSwapsTheGradientBack)
{
    Tensor a = Sample({2, 3, 4});
    ExpectGradients([](auto &x) { return pith_transpose(x[0], 0, -1); }, Raw({&a}),
                    "transpose.int");
}

TEST_F(Formulas, SplitTakesAGradientPerPieceAndZerosForAPieceThatGotNone)
{
    Tensor a = Sample({5, 3});
    ExpectGradients(
        [](auto &x) {
            size_t n = 0;
            pith_tensor **pieces = pith_split(x[0], 2, 0, &n);
            if (!pieces)
                return (pith_tensor *)nullptr;
            pith_tensor *first = pieces[0], *last = pieces[n - 1];
            pith_tensor *y = pith_mul(first, first);  // the middle piece takes no part
            pith_tensor *z = pith_sum(last, 0, nullptr, false);
            pith_tensor *out = pith_add(y, z);
            pith_release(y);
            pith_release(z);
            pith_tensor_list_free(pieces, n);
            return out;
        },
        Raw({&a}), "add.Tensor");
}

TEST_F(Formulas, MaxAlongADimSendsTheGradientToTheIndexedPositions)
{
    Tensor a = Sample({3, 4});
    ExpectGradients(
        [](auto &x) {
            pith_tensor *values = nullptr, *indices = nullptr;
            if (pith_max_dim(x[0], 1, true, &values, &indices) != PITH_OK)
                return (pith_tensor *)nullptr;
            pith_release(indices);
            return values;
        },
        Raw({&a}), "max.dim");
}

TEST_F(Formulas, ACompositeImplicitOpRecordsItsParts)
{
    Tensor a = Sample({2, 3}), b = Sample({2, 3});
    ExpectGradients(
        [](auto &x) {
            const pith_tensor *list[] = {x[0], x[1]};
            return pith_stack_tensors(list, 2, 1);
        },
        Raw({&a, &b}), "cat");
}

TEST_F(Formulas, CopyIntoANonLeafGivesSrcTheGradientAndTheOldValuesNone)
{
    Tensor a = Sample({2, 3}), src = Sample({3});
    ExpectGradients(
        [](auto &x) {
            pith_tensor *y = pith_mul(x[0], x[0]);
            if (pith_copy_(y, x[1]) != PITH_OK) {
                pith_release(y);
                return (pith_tensor *)nullptr;
            }
            return y;
        },
        Raw({&a, &src}), "copy_");
}

TEST_F(Formulas, AChainOfOpsThroughLetsAndCases)
{
    // layer_norm's formulas use lets and a case on its optional weight
    Tensor a = Sample({2, 3, 4}), w = Sample({4}), b = Sample({4});
    int64_t shape[] = {4};
    ExpectGradients(
        [&](auto &x) { return pith_layer_norm(x[0], 1, shape, x[1], x[2], 1e-5); },
        Raw({&a, &w, &b}), "layer_norm");
    ExpectGradients([&](auto &x) { return pith_layer_norm(x[0], 1, shape, NULL, NULL, 1e-5); },
                    Raw({&a}), "layer_norm");
}

TEST_F(Formulas, DoubleBackwardRecordsTheBackward)
{
    // d/dx sum(d/dx sum(x * x * x)) = d/dx sum(3 x^2) = 6 x
    Tensor x = Sample({4});
    Tensor xx(pith_mul(x.get(), x.get()));
    Tensor y(pith_mul(xx.get(), x.get()));
    Tensor s(pith_sum(y.get(), 0, nullptr, false));
    pith_tensor *root = s.get(), *input = x.get(), *g = nullptr;
    ASSERT_EQ(pith_autograd_grad(&root, nullptr, 1, &input, 1, &g, PITH_CREATE_GRAPH), PITH_OK)
        << pith_last_error();
    Tensor dx(g);
    ASSERT_TRUE(pith_requires_grad(dx.get()));
    Tensor ds(pith_sum(dx.get(), 0, nullptr, false));
    root = ds.get();
    ASSERT_EQ(pith_backward(&root, nullptr, 1, 0), PITH_OK) << pith_last_error();
    pith_tensor *gg = nullptr;
    ASSERT_EQ(pith_grad_get(x.get(), &gg), PITH_OK);
    Tensor second(gg);
    std::vector<double> got = Values(second.get()), at = Values(x.get());
    for (size_t i = 0; i < got.size(); i++)
        EXPECT_NEAR(got[i], 6 * at[i], 1e-12);
}

TEST_F(Formulas, InPlaceMulRebasesHistoryAndReadsTheOldValues)
{
    // y = x + x saves nothing that the write could spoil
    Tensor x = Sample({3}), w = Sample({3}, 0.5, 2.0);
    Tensor y(pith_add(x.get(), x.get()));
    ASSERT_EQ(pith_mul_(y.get(), w.get()), PITH_OK) << pith_last_error();
    EXPECT_STREQ(pith_grad_fn_name(y.get()), NodeNameOf("mul_.Tensor").c_str());
    Tensor s(pith_sum(y.get(), 0, nullptr, false));
    pith_tensor *root = s.get();
    ASSERT_EQ(pith_backward(&root, nullptr, 1, 0), PITH_OK) << pith_last_error();
    pith_tensor *gx = nullptr, *gw = nullptr;
    ASSERT_EQ(pith_grad_get(x.get(), &gx), PITH_OK);
    ASSERT_EQ(pith_grad_get(w.get(), &gw), PITH_OK);
    Tensor grad_x(gx), grad_w(gw);
    std::vector<double> vx = Values(x.get()), vw = Values(w.get());
    std::vector<double> dx = Values(grad_x.get()), dw = Values(grad_w.get());
    for (size_t i = 0; i < vx.size(); i++) {
        EXPECT_NEAR(dx[i], 2 * vw[i], 1e-12);
        EXPECT_NEAR(dw[i], 2 * vx[i], 1e-12);  // self before the write
    }
}

TEST_F(Formulas, InPlaceOnAnOutputThatANodeSavedRaisesAtBackward)
{
    // exp saves its result, which mul_ then overwrites: PyTorch's error at backward
    Tensor x = Sample({3}), w = Sample({3});
    Tensor y(pith_exp(x.get()));
    ASSERT_EQ(pith_mul_(y.get(), w.get()), PITH_OK) << pith_last_error();
    Tensor s(pith_sum(y.get(), 0, nullptr, false));
    pith_tensor *root = s.get();
    EXPECT_EQ(pith_backward(&root, nullptr, 1, 0), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "which is output 0 of Exp, is at version 1; "
                                           "expected version 0 instead"));
}

TEST_F(Formulas, InPlaceOnALeafThatRequiresGradRaises)
{
    Tensor x = Sample({3}), w = Sample({3});
    EXPECT_EQ(pith_mul_(x.get(), w.get()), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "a leaf Variable that requires grad"));
}

TEST_F(Formulas, OutFormsRefuseToRecord)
{
    Tensor a = Sample({2, 2}), b = Sample({2, 2}, -1, 1, false);
    Tensor out(pith_empty(2, std::vector<int64_t>{2, 2}.data(), PITH_FLOAT64));
    EXPECT_EQ(pith_mm_out(out.get(), a.get(), b.get()), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "mm(): functions with out=... arguments don't "
                                           "support automatic differentiation"));
    pith_set_grad_enabled(false);
    EXPECT_EQ(pith_mm_out(out.get(), a.get(), b.get()), PITH_OK) << pith_last_error();
    pith_set_grad_enabled(true);
}

TEST_F(Formulas, ASecondBackwardWorksThroughANodeThatSavedNoTensor)
{
    // SumBackward1 keeps dims and self's metadata, which outlive the first backward
    Tensor x = Sample({2, 3});
    int dims[] = {1};
    Tensor y(pith_sum(x.get(), 1, dims, false));
    Tensor s(pith_sum(y.get(), 0, nullptr, false));
    pith_tensor *root = s.get();
    ASSERT_EQ(pith_backward(&root, nullptr, 1, 0), PITH_OK) << pith_last_error();
    Tensor s2(pith_sum(y.get(), 0, nullptr, false));
    root = s2.get();
    ASSERT_EQ(pith_backward(&root, nullptr, 1, 0), PITH_OK) << pith_last_error();
    pith_tensor *g = nullptr;
    ASSERT_EQ(pith_grad_get(x.get(), &g), PITH_OK);
    Tensor grad(g);
    EXPECT_EQ(Values(grad.get()), std::vector<double>(6, 2.0));
}

TEST_F(Formulas, ASecondBackwardThroughReleasedSavedTensorsRaises)
{
    Tensor a = Sample({2}), b = Sample({2});
    Tensor y(pith_mul(a.get(), b.get()));
    Tensor s(pith_sum(y.get(), 0, nullptr, false));
    pith_tensor *root = s.get();
    ASSERT_EQ(pith_backward(&root, nullptr, 1, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(pith_backward(&root, nullptr, 1, 0), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "backward through the graph a second time"));
}

// ---- the in-place forms of ops without a derivative ----

/* y = x * 1: a tensor with history, which an in-place op may write. */
Tensor WithHistory(const Tensor &x)
{
    Tensor one = Sample({}, 1, 1, false);
    return Tensor(pith_mul(x.get(), one.get()));
}

TEST_F(Formulas, InPlaceComparisonsRecordANodeOfZeroGradients)
{
    struct Case {
        pith_status (*op)(pith_tensor *, const pith_tensor *);
        const char *overload, *node;
    };
    const Case cases[] = {{pith_eq_, "eq_.Tensor", "EqBackward1"},
                          {pith_ne_, "ne_.Tensor", "NeBackward1"},
                          {pith_lt_, "lt_.Tensor", "LtBackward1"},
                          {pith_le_, "le_.Tensor", "LeBackward1"},
                          {pith_gt_, "gt_.Tensor", "GtBackward1"},
                          {pith_ge_, "ge_.Tensor", "GeBackward1"}};
    for (const Case &c : cases) {
        Tensor x = Sample({2, 3}), other = Sample({3}, -1, 1);
        Tensor y = WithHistory(x);
        ASSERT_EQ(c.op(y.get(), other.get()), PITH_OK) << pith_last_error();
        EXPECT_STREQ(pith_grad_fn_name(y.get()), c.node);
        EXPECT_EQ(NodeNameOf(c.overload), c.node);
        Tensor s(pith_sum(y.get(), 0, nullptr, false));
        pith_tensor *root = s.get();
        ASSERT_EQ(pith_backward(&root, nullptr, 1, 0), PITH_OK) << pith_last_error();
        for (const Tensor *input : {&x, &other}) {
            pith_tensor *g = nullptr;
            ASSERT_EQ(pith_grad_get(input->get(), &g), PITH_OK);
            ASSERT_NE(g, nullptr) << c.node << ": an input got no gradient";
            Tensor grad(g);
            EXPECT_EQ(pith_test::Sizes(grad.get()), pith_test::Sizes(input->get()));
            for (double v : Values(grad.get()))
                EXPECT_EQ(v, 0.0) << c.node;
        }
    }
}

TEST_F(Formulas, AnInPlaceComparisonGivesSelfHistoryWhenOnlyOtherRequiresGrad)
{
    Tensor self = Sample({3}, -1, 1, false), other = Sample({3});
    ASSERT_EQ(pith_lt_(self.get(), other.get()), PITH_OK) << pith_last_error();
    EXPECT_TRUE(pith_requires_grad(self.get()));
    EXPECT_STREQ(pith_grad_fn_name(self.get()), "LtBackward1");
}

TEST_F(Formulas, AnInPlaceComparisonOnALeafThatRequiresGradRaises)
{
    Tensor x = Sample({3}), other = Sample({3}, -1, 1, false);
    EXPECT_EQ(pith_eq_(x.get(), other.get()), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "a leaf Variable that requires grad is being used in "
                                           "an in-place operation."));
}

TEST_F(Formulas, InPlaceOpsWithoutADerivativeRecordNotImplementedWhichRaisesAtBackward)
{
    struct Case {
        pith_status (*op)(pith_tensor *, const pith_tensor *);
        const char *overload, *message;
    };
    const Case cases[] = {
        {pith_floor_divide_, "floor_divide_.Tensor",
         "derivative for pith::floor_divide_ is not implemented"},
        {pith_logical_and_, "logical_and_", "derivative for pith::logical_and_ is not implemented"},
        {pith_logical_or_, "logical_or_", "derivative for pith::logical_or_ is not implemented"}};
    for (const Case &c : cases) {
        Tensor x = Sample({2, 3}), other = Sample({3}, 0.5, 2);
        Tensor y = WithHistory(x);
        ASSERT_EQ(c.op(y.get(), other.get()), PITH_OK) << pith_last_error();
        EXPECT_STREQ(pith_grad_fn_name(y.get()), "NotImplemented");
        EXPECT_EQ(NodeNameOf(c.overload), "NotImplemented");
        Tensor s(pith_sum(y.get(), 0, nullptr, false));
        pith_tensor *root = s.get();
        EXPECT_EQ(pith_backward(&root, nullptr, 1, 0), PITH_ERR_RUNTIME);
        EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, c.message));
    }
    Tensor x = Sample({3});
    Tensor y = WithHistory(x);
    ASSERT_EQ(pith_logical_not_(y.get()), PITH_OK) << pith_last_error();
    EXPECT_STREQ(pith_grad_fn_name(y.get()), "NotImplemented");
}

TEST_F(Formulas, AnInPlaceOpWhoseKernelRefusesKeepsSelfsHistory)
{
    // bitwise ops take no floating tensors: the kernel's error, and the node made for the
    // call is released
    Tensor x = Sample({3}), other = Sample({3}, -1, 1, false);
    Tensor y = WithHistory(x);
    EXPECT_NE(pith_bitwise_and_(y.get(), other.get()), PITH_OK);
    pith_clear_error();
    EXPECT_STREQ(pith_grad_fn_name(y.get()), "MulBackward0");
}

TEST_F(Formulas, InPlaceComparisonsUnderNoGradRecordNothing)
{
    Tensor x = Sample({3}), other = Sample({3});
    Tensor y = WithHistory(x);
    pith_set_grad_enabled(false);
    pith_status st = pith_ge_(y.get(), other.get());
    pith_set_grad_enabled(true);
    ASSERT_EQ(st, PITH_OK) << pith_last_error();
    EXPECT_STREQ(pith_grad_fn_name(y.get()), "MulBackward0");
}

TEST_F(Formulas, NoGradRecordsNothing)
{
    Tensor a = Sample({2}), b = Sample({2});
    pith_set_grad_enabled(false);
    Tensor y(pith_mul(a.get(), b.get()));
    pith_set_grad_enabled(true);
    EXPECT_EQ(pith_grad_fn_name(y.get()), nullptr);
    EXPECT_FALSE(pith_requires_grad(y.get()));
}

}  // namespace
