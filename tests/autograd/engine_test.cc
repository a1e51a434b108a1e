// engine_test.cc — the engine (autograd/engine.c) on graphs of hand-made nodes
// (engine_shim.c): chains, diamonds, repeated inputs, broadcast reduction, retain_graph,
// saved-tensor versions, grad() with inputs, errors, threads, and release of every node.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "common/pith_test.h"
#include "engine_shim.h"
#include "live_nodes.h"
#include "pith/autograd.h"
#include "pith/pith.h"

namespace {

using pith_test::HasError;
using pith_test::Tensor;
using pith_test::Values;

using Engine = LiveNodesFixture;

Tensor Leaf(std::vector<int64_t> sizes, double value)
{
    Tensor t(pith_full((int)sizes.size(), sizes.data(), value, PITH_FLOAT64));
    EXPECT_EQ(pith_set_requires_grad(t.get(), true), PITH_OK);
    return t;
}

Tensor Ones(std::vector<int64_t> sizes)
{
    return Tensor(pith_full((int)sizes.size(), sizes.data(), 1.0, PITH_FLOAT64));
}

Tensor Grad(const pith_tensor *t)
{
    pith_tensor *g = nullptr;
    EXPECT_EQ(pith_grad_get(t, &g), PITH_OK);
    return Tensor(g);
}

TEST_F(Engine, LeafRequiresGradAndChainMultiplies)
{
    Tensor x = Leaf({}, 1.5);
    EXPECT_TRUE(pith_requires_grad(x.get()));
    EXPECT_TRUE(pith_is_leaf(x.get()));
    Tensor a(shim_scale(x.get(), 2.0));
    Tensor y(shim_scale(a.get(), 3.0));
    EXPECT_FALSE(pith_is_leaf(y.get()));
    EXPECT_STREQ(pith_grad_fn_name(y.get()), "ScaleTest");
    pith_tensor *roots[] = {y.get()};
    ASSERT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(Grad(x.get()).get()), std::vector<double>{6.0});
    EXPECT_FALSE(Grad(a.get())) << "a non-leaf keeps no .grad";
}

TEST_F(Engine, DiamondSumsBothPaths)
{
    Tensor x = Leaf({3}, 1.0);
    Tensor a(shim_scale(x.get(), 2.0)), b(shim_scale(x.get(), 3.0));
    Tensor y(shim_add(a.get(), b.get()));
    Tensor g = (Ones({3}));
    pith_tensor *roots[] = {y.get()}, *grads[] = {g.get()};
    ASSERT_EQ(pith_backward(roots, grads, 1, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(Grad(x.get()).get()), (std::vector<double>{5, 5, 5}));
}

TEST_F(Engine, RepeatedInputGetsBothGradients)
{
    Tensor x = Leaf({}, 2.0);
    Tensor y(shim_add(x.get(), x.get()));
    pith_tensor *roots[] = {y.get()};
    ASSERT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(Grad(x.get()).get()), std::vector<double>{2.0});
}

TEST_F(Engine, GradientsAccumulateAcrossBackwards)
{
    Tensor x = Leaf({}, 2.0);
    for (int i = 0; i < 3; i++) {
        Tensor y(shim_scale(x.get(), 4.0));
        pith_tensor *roots[] = {y.get()};
        ASSERT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK) << pith_last_error();
    }
    EXPECT_EQ(Values(Grad(x.get()).get()), std::vector<double>{12.0});
}

TEST_F(Engine, BroadcastGradientIsSummedToTheInputShape)
{
    Tensor row = Leaf({3}, 1.0);
    Tensor mat = Leaf({2, 3}, 1.0);
    Tensor y(shim_add(row.get(), mat.get()));
    Tensor g = (Ones({2, 3}));
    pith_tensor *roots[] = {y.get()}, *grads[] = {g.get()};
    ASSERT_EQ(pith_backward(roots, grads, 1, 0), PITH_OK) << pith_last_error();
    Tensor gr = Grad(row.get());
    EXPECT_EQ(pith_ndim(gr.get()), 1);
    EXPECT_EQ(Values(gr.get()), (std::vector<double>{2, 2, 2}));
    EXPECT_EQ(Values(Grad(mat.get()).get()), (std::vector<double>{1, 1, 1, 1, 1, 1}));
}

TEST_F(Engine, SecondBackwardNeedsRetainGraph)
{
    Tensor x = Leaf({}, 3.0);
    Tensor y(shim_square(x.get()));
    pith_tensor *roots[] = {y.get()};
    ASSERT_EQ(pith_backward(roots, nullptr, 1, PITH_RETAIN_GRAPH), PITH_OK) << pith_last_error();
    ASSERT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(Grad(x.get()).get()), std::vector<double>{12.0});
    EXPECT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "backward through the graph a second time"));
}

TEST_F(Engine, SavedTensorModifiedInPlaceRaisesWithBothVersions)
{
    Tensor x = Leaf({2}, 3.0);
    Tensor y(shim_square(x.get()));
    shim_bump_version(x.get());
    Tensor g = (Ones({2}));
    pith_tensor *roots[] = {y.get()}, *grads[] = {g.get()};
    EXPECT_EQ(pith_backward(roots, grads, 1, 0), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME,
                         "modified by an inplace operation: [torch.DoubleTensor [2]] is at "
                         "version 1; expected version 0 instead"));
}

TEST_F(Engine, NodeThatSavedNothingIgnoresVersions)
{
    Tensor x = Leaf({}, 3.0);
    Tensor y(shim_scale(x.get(), 2.0));
    shim_bump_version(x.get());
    pith_tensor *roots[] = {y.get()};
    ASSERT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK) << pith_last_error();
}

TEST_F(Engine, GradOfChosenInputsLeavesDotGradAlone)
{
    Tensor x = Leaf({}, 1.0), w = Leaf({}, 1.0), unused = Leaf({}, 1.0);
    Tensor a(shim_scale(x.get(), 5.0));
    Tensor y(shim_add(a.get(), w.get()));
    pith_tensor *roots[] = {y.get()}, *inputs[] = {x.get(), a.get()}, *grads[2] = {};
    ASSERT_EQ(pith_autograd_grad(roots, nullptr, 1, inputs, 2, grads, 0), PITH_OK)
        << pith_last_error();
    Tensor gx(grads[0]), ga(grads[1]);
    EXPECT_EQ(Values(gx.get()), std::vector<double>{5.0});
    EXPECT_EQ(Values(ga.get()), std::vector<double>{1.0});
    EXPECT_FALSE(Grad(x.get()));
    EXPECT_FALSE(Grad(w.get()));

    Tensor y2(shim_scale(x.get(), 2.0));
    pith_tensor *roots2[] = {y2.get()}, *inputs2[] = {unused.get()}, *grads2[1] = {};
    EXPECT_EQ(pith_autograd_grad(roots2, nullptr, 1, inputs2, 1, grads2, PITH_RETAIN_GRAPH),
              PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "appears to not have been used in the graph"));
    ASSERT_EQ(pith_autograd_grad(roots2, nullptr, 1, inputs2, 1, grads2, PITH_ALLOW_UNUSED),
              PITH_OK);
    EXPECT_EQ(grads2[0], nullptr);
}

TEST_F(Engine, BackwardInputsAccumulatesOnlyThere)
{
    Tensor x = Leaf({}, 1.0), w = Leaf({}, 1.0);
    Tensor a(shim_scale(x.get(), 2.0));
    Tensor y(shim_add(a.get(), w.get()));
    pith_tensor *roots[] = {y.get()}, *inputs[] = {x.get()};
    ASSERT_EQ(pith_backward_inputs(roots, nullptr, 1, inputs, 1, 0), PITH_OK)
        << pith_last_error();
    EXPECT_EQ(Values(Grad(x.get()).get()), std::vector<double>{2.0});
    EXPECT_FALSE(Grad(w.get()));
}

TEST_F(Engine, ErrorsOfRoots)
{
    Tensor plain(Ones({2}));
    pith_tensor *roots[] = {plain.get()};
    EXPECT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "element 0 of tensors does not require grad"));

    Tensor x = Leaf({2}, 1.0);
    Tensor y(shim_scale(x.get(), 2.0));
    pith_tensor *r[] = {y.get()};
    EXPECT_EQ(pith_backward(r, nullptr, 1, PITH_RETAIN_GRAPH), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "grad can be implicitly created only for scalar"));
    Tensor g = (Ones({3}));
    pith_tensor *gs[] = {g.get()};
    EXPECT_EQ(pith_backward(r, gs, 1, 0), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "Mismatch in shape: grad_output[0] has a shape of "
                                           "torch.Size([3]) and output[0] has a shape of "
                                           "torch.Size([2])"));

    Tensor i(pith_full(0, nullptr, 1.0, PITH_INT64));
    EXPECT_EQ(pith_set_requires_grad(i.get(), true), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "only Tensors of floating point"));
    EXPECT_EQ(pith_set_requires_grad(y.get(), false), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "only change requires_grad flags of leaf"));
}

TEST_F(Engine, NoRootsRunNothingAndLeaveEveryInputUnused)
{
    Tensor x = Leaf({2}, 1.0);
    EXPECT_EQ(pith_backward(nullptr, nullptr, 0, 0), PITH_OK) << pith_last_error();
    EXPECT_FALSE(Grad(x.get()));
    pith_tensor *inputs[] = {x.get()}, *grads[] = {nullptr};
    EXPECT_EQ(pith_autograd_grad(nullptr, nullptr, 0, inputs, 1, grads, 0), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "index 0 appears to not have been used"));
    ASSERT_EQ(pith_autograd_grad(nullptr, nullptr, 0, inputs, 1, grads, PITH_ALLOW_UNUSED),
              PITH_OK)
        << pith_last_error();
    EXPECT_EQ(grads[0], nullptr);
    EXPECT_EQ(pith_backward(nullptr, nullptr, 2, 0), PITH_ERR_VALUE);
    EXPECT_EQ(pith_backward(nullptr, nullptr, -1, 0), PITH_ERR_VALUE);
}

struct TaskSeen {
    int64_t id = -2;
    bool filtered = false;
};

pith_status RecordGraphTask(void *ctx, const pith_tensor *, pith_tensor **)
{
    auto *seen = static_cast<TaskSeen *>(ctx);
    seen->id = pith_autograd_graph_task_id();
    seen->filtered = pith_autograd_graph_task_filtered();
    return PITH_OK;
}

TEST_F(Engine, GraphTaskIsSeenFromInsideABackwardOnly)
{
    EXPECT_EQ(pith_autograd_graph_task_id(), -1);
    EXPECT_FALSE(pith_autograd_graph_task_filtered());
    Tensor x = Leaf({}, 1.0);
    TaskSeen seen;
    pith_node *node = nullptr;
    int64_t id = 0;
    ASSERT_EQ(pith_tensor_register_hook(x.get(), RecordGraphTask, &seen, nullptr, &node, &id),
              PITH_OK)
        << pith_last_error();
    Tensor y(shim_scale(x.get(), 2.0));
    pith_tensor *roots[] = {y.get()}, *inputs[] = {x.get()}, *grads[] = {nullptr};
    ASSERT_EQ(pith_backward(roots, nullptr, 1, PITH_RETAIN_GRAPH), PITH_OK);
    int64_t first = seen.id;
    EXPECT_GE(first, 0);
    EXPECT_FALSE(seen.filtered);
    ASSERT_EQ(pith_autograd_grad(roots, nullptr, 1, inputs, 1, grads, 0), PITH_OK);
    Tensor g(grads[0]);
    EXPECT_NE(seen.id, first);  // each backward is a task of its own
    EXPECT_TRUE(seen.filtered);
    EXPECT_EQ(pith_autograd_graph_task_id(), -1);
    EXPECT_EQ(pith_node_remove_hook(node, id), PITH_OK);
    pith_node_release(node);
}

TEST_F(Engine, InferenceTensorsAreWrittenOnlyInInferenceMode)
{
    // See Note [Inference tensors reach the autograd kernels]
    pith_set_inference_mode_enabled(true);
    Tensor t = Ones({2});
    Tensor other = Ones({2});
    EXPECT_EQ(pith_add_(t.get(), other.get()), PITH_OK) << pith_last_error();
    pith_set_inference_mode_enabled(false);
    EXPECT_TRUE(pith_is_inference(t.get()));
    EXPECT_EQ(pith_add_(t.get(), other.get()), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "Inplace update to inference tensor outside"));
    EXPECT_EQ(Values(t.get()), (std::vector<double>{2.0, 2.0}));  // nothing was written
    Tensor sum(pith_add(t.get(), other.get()));  // a functional op reads it as usual
    EXPECT_EQ(Values(sum.get()), (std::vector<double>{3.0, 3.0}));
    EXPECT_FALSE(pith_is_inference(sum.get()));
}

TEST_F(Engine, GradModeOffRecordsNothing)
{
    Tensor x = Leaf({}, 1.0);
    pith_set_grad_enabled(false);
    Tensor y(shim_scale(x.get(), 2.0));
    pith_set_grad_enabled(true);
    EXPECT_FALSE(pith_requires_grad(y.get()));
    EXPECT_TRUE(pith_is_leaf(y.get()));
}

TEST_F(Engine, NodesExposeNamesAndEdges)
{
    Tensor x = Leaf({}, 1.0);
    Tensor a(shim_scale(x.get(), 2.0));
    Tensor y(shim_add(a.get(), x.get()));
    pith_node *fn = pith_grad_fn(y.get());
    ASSERT_NE(fn, nullptr);
    EXPECT_STREQ(pith_node_name(fn), "AddTest");
    ASSERT_EQ(pith_node_num_next(fn), 2);
    pith_node *next = nullptr;
    int nr = -1;
    ASSERT_EQ(pith_node_next(fn, 0, &next, &nr), PITH_OK);
    EXPECT_STREQ(pith_node_name(next), "ScaleTest");
    pith_node *acc = nullptr;
    ASSERT_EQ(pith_node_next(fn, 1, &acc, &nr), PITH_OK);
    EXPECT_STREQ(pith_node_name(acc), "AccumulateGrad");
    Tensor leaf(pith_node_variable(acc));
    EXPECT_EQ(leaf.get(), x.get());
    EXPECT_EQ(pith_node_next(fn, 2, &next, &nr), PITH_ERR_INDEX);
    pith_clear_error();
    pith_node_release(acc);
    pith_node_release(next);
    pith_node_release(fn);
}

TEST_F(Engine, LongChainRunsAndFreesWithoutDeepRecursion)
{
    Tensor x = Leaf({}, 1.0);
    pith_tensor *y = x.get();
    pith_retain(y);
    for (int i = 0; i < 200000; i++) {
        pith_tensor *next = shim_scale(y, 1.0);
        pith_release(y);
        y = next;
    }
    pith_tensor *roots[] = {y};
    ASSERT_EQ(pith_backward(roots, nullptr, 1, PITH_RETAIN_GRAPH), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(Grad(x.get()).get()), std::vector<double>{1.0});
    pith_release(y); /* frees 200000 nodes through the worklist */
}

TEST_F(Engine, ThreadsRunIndependentGraphsAtOnce)
{
    std::vector<std::thread> threads;
    std::vector<double> results(4, 0.0);
    for (int t = 0; t < 4; t++)
        threads.emplace_back([t, &results] {
            Tensor x = Leaf({8}, 1.0);
            for (int it = 0; it < 200; it++) {
                Tensor a(shim_square(x.get()));
                Tensor b(shim_scale(a.get(), (double)(t + 1)));
                Tensor y(shim_add(b.get(), x.get()));
                Tensor g = (Ones({8}));
                pith_tensor *roots[] = {y.get()}, *gs[] = {g.get()};
                ASSERT_EQ(pith_backward(roots, gs, 1, 0), PITH_OK) << pith_last_error();
            }
            results[t] = Values(Grad(x.get()).get())[0];
        });
    for (auto &th : threads)
        th.join();
    for (int t = 0; t < 4; t++)
        EXPECT_EQ(results[t], 200.0 * (2.0 * (t + 1) + 1.0));
}

}  // namespace
