// function_test.cc — custom functions from C (autograd/function.c): a node with a C
// backward recorded by pith_function_record, run by the engine, differentiated again under
// create_graph, with saved tensors, dirty and non-differentiable outputs, views, errors,
// and release of its ctx, nodes and tensors.
#include <gtest/gtest.h>

#include <vector>

#include "common/pith_test.h"
#include "live_nodes.h"
#include "pith/autograd.h"
#include "pith/pith.h"

namespace {

using pith_test::HasError;
using pith_test::Tensor;
using pith_test::Values;

using Function = LiveNodesFixture;

const int64_t kTwo[] = {2}, kThree[] = {3};

Tensor Leaf(std::vector<int64_t> sizes, double value)
{
    Tensor t(pith_full((int)sizes.size(), sizes.data(), value, PITH_FLOAT64));
    EXPECT_EQ(pith_set_requires_grad(t.get(), true), PITH_OK);
    return t;
}

Tensor Grad(const pith_tensor *t)
{
    pith_tensor *g = nullptr;
    EXPECT_EQ(pith_grad_get(t, &g), PITH_OK);
    return Tensor(g);
}

struct Ctx {
    int *released;
    int calls = 0;
    bool fail = false;
};

void ReleaseCtx(void *ctx)
{
    Ctx *c = static_cast<Ctx *>(ctx);
    (*c->released)++;
    delete c;
}

// Square: y = x * x, saves x, backward 2 * x * g (in pith ops, so that it records).
pith_status SquareBackward(void *ctx, pith_node *node, pith_tensor *const *grads, int n_out,
                           pith_tensor **out, int n_in)
{
    Ctx *c = static_cast<Ctx *>(ctx);
    c->calls++;
    if (c->fail)
        return pith_set_error(PITH_ERR_VALUE, "square refuses to go backward");
    if (n_out != 1 || n_in != 1)
        return pith_set_error(PITH_ERR_RUNTIME, "unexpected arity");
    pith_tensor *x = nullptr;
    if (pith_function_saved(node, 0, &x) != PITH_OK)
        return pith_last_status();
    Tensor two(pith_full(0, nullptr, 2.0, PITH_FLOAT64));
    Tensor twice(pith_mul(x, two.get()));
    pith_release(x);
    out[0] = pith_mul(twice.get(), grads[0]);
    return out[0] ? PITH_OK : pith_last_status();
}

const pith_function_vtable kSquare = {"SquareBackward", SquareBackward, ReleaseCtx};

// Records Square on x: y computed without grad, then recorded.
Tensor Square(const Tensor &x, Ctx *ctx, int flags = 0)
{
    bool enabled = pith_grad_enabled();
    pith_set_grad_enabled(false);
    pith_tensor *y = pith_mul(x.get(), x.get());
    pith_set_grad_enabled(enabled);
    pith_tensor *in[] = {x.get()};
    pith_tensor *saved[] = {x.get()};
    EXPECT_EQ(pith_function_record(&kSquare, ctx, flags, in, 1, &y, nullptr, 1, saved, 1,
                                   nullptr),
              PITH_OK)
        << pith_last_error();
    return Tensor(y);
}

TEST_F(Function, EngineRunsTheCallbackAndReleasesTheCtx)
{
    int released = 0;
    {
        Tensor x = Leaf({3}, 3.0);
        Ctx *ctx = new Ctx{&released};
        Tensor y = Square(x, ctx);
        EXPECT_STREQ(pith_grad_fn_name(y.get()), "SquareBackward");
        EXPECT_EQ(Values(y.get()), (std::vector<double>{9, 9, 9}));
        Tensor ones(pith_full(1, kThree, 1.0, PITH_FLOAT64));
        pith_tensor *roots[] = {y.get()}, *grads[] = {ones.get()};
        ASSERT_EQ(pith_backward(roots, grads, 1, 0), PITH_OK) << pith_last_error();
        EXPECT_EQ(ctx->calls, 1);
        EXPECT_EQ(Values(Grad(x.get()).get()), (std::vector<double>{6, 6, 6}));
        EXPECT_EQ(released, 0) << "the node lives with y";
    }
    EXPECT_EQ(released, 1);
}

TEST_F(Function, NextEdgesAreTheInputs)
{
    int released = 0;
    Tensor x = Leaf({2}, 1.0);
    Tensor y = Square(x, new Ctx{&released});
    pith_node *fn = pith_grad_fn(y.get()), *next = nullptr;
    int nr = -1;
    ASSERT_EQ(pith_node_num_next(fn), 1);
    ASSERT_EQ(pith_node_next(fn, 0, &next, &nr), PITH_OK);
    EXPECT_STREQ(pith_node_name(next), "AccumulateGrad");
    EXPECT_EQ(pith_function_num_saved(fn), 1);
    EXPECT_EQ(pith_function_num_saved(next), 0);
    pith_node_release(next);
    pith_node_release(fn);
}

TEST_F(Function, CreateGraphDifferentiatesTheBackward)
{
    int released = 0;
    Tensor x = Leaf({}, 3.0);
    Tensor y = Square(x, new Ctx{&released});
    pith_tensor *roots[] = {y.get()}, *inputs[] = {x.get()}, *g = nullptr;
    ASSERT_EQ(pith_autograd_grad(roots, nullptr, 1, inputs, 1, &g, PITH_CREATE_GRAPH), PITH_OK)
        << pith_last_error();
    Tensor dy(g);
    EXPECT_EQ(Values(dy.get()), std::vector<double>{6.0});
    EXPECT_TRUE(pith_requires_grad(dy.get())) << "the backward recorded";
    pith_tensor *roots2[] = {dy.get()}, *g2 = nullptr;
    ASSERT_EQ(pith_autograd_grad(roots2, nullptr, 1, inputs, 1, &g2, 0), PITH_OK)
        << pith_last_error();
    EXPECT_EQ(Values(Tensor(g2).get()), std::vector<double>{2.0});
}

TEST_F(Function, CallbackErrorReachesTheCallerWithItsMessage)
{
    int released = 0;
    Tensor x = Leaf({}, 1.0);
    Ctx *ctx = new Ctx{&released};
    ctx->fail = true;
    Tensor y = Square(x, ctx);
    pith_tensor *roots[] = {y.get()};
    EXPECT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "square refuses to go backward"));
    EXPECT_FALSE(Grad(x.get()));
}

TEST_F(Function, NothingIsRecordedWithoutGradAndTheCtxIsReleasedAtOnce)
{
    int released = 0;
    Tensor x = Leaf({2}, 1.0);
    pith_set_grad_enabled(false);
    Tensor y = Square(x, new Ctx{&released});
    pith_set_grad_enabled(true);
    EXPECT_EQ(released, 1);
    EXPECT_FALSE(pith_requires_grad(y.get()));
    Tensor z(pith_full(1, kTwo, 1.0, PITH_FLOAT64)); /* requires no grad */
    Tensor w = Square(z, new Ctx{&released});
    EXPECT_EQ(released, 2);
    EXPECT_TRUE(pith_is_leaf(w.get()));
}

TEST_F(Function, SecondBackwardWithoutRetainGraphRaises)
{
    int released = 0;
    Tensor x = Leaf({}, 1.0);
    Tensor y = Square(x, new Ctx{&released});
    pith_tensor *roots[] = {y.get()};
    ASSERT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK);
    EXPECT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "backward through the graph a second time"));
}

TEST_F(Function, SavedTensorModifiedInPlaceRaisesAtBackward)
{
    int released = 0;
    Tensor base = Leaf({2}, 1.0);
    Tensor x(pith_mul(base.get(), base.get())); /* a non-leaf, so it may be written */
    Tensor y = Square(x, new Ctx{&released});
    Tensor one(pith_full(0, nullptr, 1.0, PITH_FLOAT64));
    pith_set_grad_enabled(false);
    ASSERT_EQ(pith_add_(x.get(), one.get()), PITH_OK);
    pith_set_grad_enabled(true);
    Tensor s(pith_sum(y.get(), 0, nullptr, false));
    pith_tensor *roots[] = {s.get()};
    EXPECT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "modified by an inplace operation"));
}

// Split: two outputs, the second not differentiable; backward sees NULL for it.
pith_status SplitBackward(void *ctx, pith_node *, pith_tensor *const *grads, int n_out,
                          pith_tensor **out, int)
{
    Ctx *c = static_cast<Ctx *>(ctx);
    c->calls++;
    if (n_out != 2 || grads[1] != nullptr)
        return pith_set_error(PITH_ERR_RUNTIME, "expected no gradient for output 1");
    pith_retain(grads[0]);
    out[0] = grads[0];
    return PITH_OK;
}
const pith_function_vtable kSplit = {"SplitBackward", SplitBackward, ReleaseCtx};

TEST_F(Function, NonDifferentiableOutputGetsNoHistoryAndNoGradient)
{
    int released = 0;
    Tensor x = Leaf({2}, 2.0);
    pith_set_grad_enabled(false);
    pith_tensor *outs[] = {pith_neg(x.get()), pith_exp(x.get())};
    pith_set_grad_enabled(true);
    pith_tensor *in[] = {x.get()};
    int flags[] = {0, PITH_OUTPUT_NON_DIFFERENTIABLE};
    Ctx *ctx = new Ctx{&released};
    ASSERT_EQ(pith_function_record(&kSplit, ctx, PITH_FUNCTION_NO_MATERIALIZE_GRADS, in, 1, outs,
                                   flags, 2, nullptr, 0, nullptr),
              PITH_OK);
    Tensor a(outs[0]), b(outs[1]);
    EXPECT_TRUE(pith_requires_grad(a.get()));
    EXPECT_FALSE(pith_requires_grad(b.get()));
    Tensor s(pith_sum(a.get(), 0, nullptr, false));
    pith_tensor *roots[] = {s.get()};
    ASSERT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(ctx->calls, 1);
    EXPECT_EQ(Values(Grad(x.get()).get()), (std::vector<double>{1, 1}));
}

TEST_F(Function, MaterializeOffPassesNullForAMissingGradient)
{
    int released = 0;
    Tensor x = Leaf({2}, 2.0);
    pith_set_grad_enabled(false);
    pith_tensor *outs[] = {pith_neg(x.get()), pith_exp(x.get())};
    pith_set_grad_enabled(true);
    pith_tensor *in[] = {x.get()};
    Ctx *ctx = new Ctx{&released};
    ASSERT_EQ(pith_function_record(&kSplit, ctx, PITH_FUNCTION_NO_MATERIALIZE_GRADS, in, 1, outs,
                                   nullptr, 2, nullptr, 0, nullptr),
              PITH_OK);
    Tensor a(outs[0]), b(outs[1]);
    Tensor s(pith_sum(a.get(), 0, nullptr, false));
    pith_tensor *roots[] = {s.get()};
    ASSERT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(ctx->calls, 1);
}

TEST_F(Function, MaterializeOnGivesZerosForAMissingGradient)
{
    int released = 0;
    Tensor x = Leaf({2}, 2.0);
    pith_set_grad_enabled(false);
    pith_tensor *outs[] = {pith_neg(x.get()), pith_exp(x.get())};
    pith_set_grad_enabled(true);
    pith_tensor *in[] = {x.get()};
    Ctx *ctx = new Ctx{&released};
    ASSERT_EQ(pith_function_record(&kSplit, ctx, 0, in, 1, outs, nullptr, 2, nullptr, 0, nullptr),
              PITH_OK);
    Tensor a(outs[0]), b(outs[1]);
    Tensor s(pith_sum(a.get(), 0, nullptr, false));
    pith_tensor *roots[] = {s.get()};
    EXPECT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "expected no gradient for output 1"))
        << "the engine made zeros for output 1";
}

// Identity backward, for dirty and view outputs.
pith_status PassBackward(void *, pith_node *, pith_tensor *const *grads, int, pith_tensor **out,
                         int n_in)
{
    for (int j = 0; j < n_in; j++) {
        pith_retain(grads[0]);
        out[j] = grads[0];
    }
    return PITH_OK;
}
const pith_function_vtable kPass = {"PassBackward", PassBackward, nullptr};

TEST_F(Function, DirtyInputTakesTheNodeAsItsHistory)
{
    Tensor w = Leaf({2}, 1.0);
    Tensor x(pith_mul(w.get(), w.get()));
    Tensor one(pith_full(0, nullptr, 1.0, PITH_FLOAT64));
    int64_t before = pith_version_counter(x.get());
    pith_set_grad_enabled(false);
    ASSERT_EQ(pith_add_(x.get(), one.get()), PITH_OK);
    pith_set_grad_enabled(true);
    pith_tensor *in[] = {x.get()}, *outs[] = {x.get()};
    pith_retain(x.get());
    int flags[] = {PITH_OUTPUT_DIRTY};
    ASSERT_EQ(pith_function_record(&kPass, nullptr, 0, in, 1, outs, flags, 1, nullptr, 0, nullptr),
              PITH_OK)
        << pith_last_error();
    Tensor out(outs[0]);
    EXPECT_EQ(out.get(), x.get()) << "a dirty input is returned itself";
    EXPECT_GT(pith_version_counter(x.get()), before);
    EXPECT_STREQ(pith_grad_fn_name(x.get()), "PassBackward");
    Tensor s(pith_sum(x.get(), 0, nullptr, false));
    pith_tensor *roots[] = {s.get()};
    ASSERT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(Grad(w.get()).get()), (std::vector<double>{2, 2}));
}

TEST_F(Function, DirtyViewSavedIsReleasedWithTheGraph)
{
    // a dirty view saved for backward: its history (CopySlices) leads back to the node, so
    // it is saved without it, or the graph would hold itself and leak
    Tensor w = Leaf({4}, 1.0);
    Tensor base(pith_mul(w.get(), w.get()));
    int64_t sizes[] = {2, 2};
    pith_set_grad_enabled(false);
    Tensor one(pith_full(0, nullptr, 1.0, PITH_FLOAT64));
    pith_set_grad_enabled(true);
    Tensor v(pith_reshape(base.get(), 2, sizes));
    pith_set_grad_enabled(false);
    ASSERT_EQ(pith_add_(v.get(), one.get()), PITH_OK);
    pith_set_grad_enabled(true);
    pith_tensor *in[] = {v.get()}, *outs[] = {v.get()}, *saved[] = {v.get()};
    pith_retain(v.get());
    int flags[] = {PITH_OUTPUT_DIRTY};
    ASSERT_EQ(pith_function_record(&kPass, nullptr, 0, in, 1, outs, flags, 1, saved, 1, nullptr),
              PITH_OK)
        << pith_last_error();
    Tensor out(outs[0]);
    EXPECT_STREQ(pith_grad_fn_name(base.get()), "CopySlices");
    Tensor s(pith_sum(base.get(), 0, nullptr, false));
    pith_tensor *roots[] = {s.get()};
    /* retain_graph: the saved values stay, and must not hold the graph */
    ASSERT_EQ(pith_backward(roots, nullptr, 1, PITH_RETAIN_GRAPH), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(Grad(w.get()).get()), (std::vector<double>{2, 2, 2, 2}));
}

TEST_F(Function, DirtyLeafThatRequiresGradIsRefused)
{
    Tensor x = Leaf({2}, 1.0);
    pith_tensor *in[] = {x.get()}, *outs[] = {x.get()};
    int flags[] = {PITH_OUTPUT_DIRTY};
    int released = 0;
    EXPECT_EQ(pith_function_record(&kSquare, new Ctx{&released}, 0, in, 1, outs, flags, 1, nullptr,
                                   0, nullptr),
              PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "a leaf Variable that requires grad has been used in "
                                           "an in-place operation."));
    EXPECT_EQ(released, 1) << "the ctx is taken on failure too";
    EXPECT_TRUE(pith_is_leaf(x.get()));
}

TEST_F(Function, InputReturnedAsIsIsAnAliasWithTheHistory)
{
    Tensor x = Leaf({2}, 1.0);
    pith_retain(x.get());
    pith_tensor *in[] = {x.get()}, *outs[] = {x.get()};
    ASSERT_EQ(pith_function_record(&kPass, nullptr, 0, in, 1, outs, nullptr, 1, nullptr, 0,
                                   nullptr),
              PITH_OK);
    Tensor out(outs[0]);
    EXPECT_NE(out.get(), x.get());
    EXPECT_TRUE(pith_is_leaf(x.get())) << "the input keeps its own history";
    EXPECT_STREQ(pith_grad_fn_name(out.get()), "PassBackward");
    EXPECT_EQ(pith_data_ptr(out.get()), pith_data_ptr(x.get()));
    Tensor one(pith_full(0, nullptr, 1.0, PITH_FLOAT64));
    EXPECT_EQ(pith_add_(out.get(), one.get()), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "Output 0 of Pass is a view and is being modified "
                                           "inplace. This view was created inside a custom "
                                           "Function"));
}

TEST_F(Function, ViewOfAnInputTakesTheNodeAsItsHistory)
{
    Tensor w = Leaf({4}, 1.0);
    Tensor x(pith_mul(w.get(), w.get()));
    pith_set_grad_enabled(false);
    int64_t sizes[] = {2, 2};
    pith_tensor *outs[] = {pith_reshape(x.get(), 2, sizes)};
    pith_set_grad_enabled(true);
    pith_tensor *in[] = {x.get()};
    ASSERT_EQ(pith_function_record(&kPass, nullptr, 0, in, 1, outs, nullptr, 1, nullptr, 0,
                                   nullptr),
              PITH_OK);
    Tensor v(outs[0]);
    EXPECT_STREQ(pith_grad_fn_name(v.get()), "PassBackward");
}

TEST_F(Function, BadArgumentsAreErrors)
{
    pith_tensor *y = nullptr;
    EXPECT_EQ(pith_function_record(nullptr, nullptr, 0, nullptr, 0, &y, nullptr, 1, nullptr, 0,
                                   nullptr),
              PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "a vtable with a name and a backward"));
    EXPECT_EQ(pith_function_record(&kPass, nullptr, 0, nullptr, 0, &y, nullptr, 1, nullptr, 0,
                                   nullptr),
              PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "output 0 is NULL"));
    pith_tensor *out = nullptr;
    EXPECT_EQ(pith_function_saved(nullptr, 0, &out), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "not a custom function node"));
}

TEST_F(Function, ReleasesEveryNodeAndTensorOfALongChain)
{
    int released = 0;
    {
        Tensor x = Leaf({}, 1.0001);
        Tensor y(pith_mul(x.get(), x.get()));
        for (int i = 0; i < 200; i++) {
            Tensor next = Square(y, new Ctx{&released});
            y = std::move(next);
        }
        pith_tensor *roots[] = {y.get()};
        ASSERT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK) << pith_last_error();
    }
    EXPECT_EQ(released, 200);
}

}  // namespace
