// engine_threads_test.cc — the engine and threads (Note [The engine's threads and the GIL],
// autograd/engine.c): backwards on several threads at once, over independent graphs, into
// one shared leaf, through one shared subgraph; and backward called from inside a backward,
// deeply, alone and on several threads. The suite is named EngineConcurrency so that the
// TSan run (scripts/test.sh, ctest -R Concurrency) runs it.
#include <gtest/gtest.h>

#include <atomic>
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

using EngineConcurrency = LiveNodesFixture;

constexpr int kThreads = 4;

Tensor Leaf(std::vector<int64_t> sizes, double value)
{
    Tensor t(pith_full((int)sizes.size(), sizes.data(), value, PITH_FLOAT64));
    EXPECT_EQ(pith_set_requires_grad(t.get(), true), PITH_OK);
    return t;
}

Tensor Ones(int64_t n)
{
    return Tensor(pith_full(1, &n, 1.0, PITH_FLOAT64));
}

Tensor Grad(const pith_tensor *t)
{
    pith_tensor *g = nullptr;
    EXPECT_EQ(pith_grad_get(t, &g), PITH_OK);
    return Tensor(g);
}

// Starts kThreads threads at once (a spin barrier, so that their backwards overlap) and
// joins them.
template <typename Body>
void RunTogether(Body body)
{
    std::atomic<int> waiting{kThreads};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++)
        threads.emplace_back([t, &waiting, &body] {
            waiting.fetch_sub(1);
            while (waiting.load() > 0)
                std::this_thread::yield();
            body(t);
        });
    for (auto &th : threads)
        th.join();
}

TEST_F(EngineConcurrency, ThreadsEachWithTheirOwnGraphGetTheirOwnGradients)
{
    std::vector<double> results(kThreads, 0.0);
    RunTogether([&results](int t) {
        Tensor x = Leaf({16}, 0.5 * (t + 1));
        Tensor w = Leaf({16}, 2.0);
        for (int it = 0; it < 100; it++) {
            Tensor h(pith_mul(x.get(), w.get())); // generated nodes: MulBackward0, ...
            Tensor r(pith_relu(h.get()));
            Tensor y(pith_sum(r.get(), 0, nullptr, false));
            pith_tensor *roots[] = {y.get()};
            ASSERT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK) << pith_last_error();
        }
        results[t] = Values(Grad(w.get()).get())[0];
    });
    for (int t = 0; t < kThreads; t++)
        EXPECT_DOUBLE_EQ(results[t], 100 * 0.5 * (t + 1)) << "thread " << t;
}

TEST_F(EngineConcurrency, ThreadsSharingALeafAccumulateEveryGradient)
{
    Tensor x = Leaf({64}, 1.0);
    const int iterations = 2000;
    RunTogether([&x](int t) {
        for (int it = 0; it < iterations; it++) {
            Tensor a(shim_scale(x.get(), (double)(t + 1)));
            Tensor y(shim_add(a.get(), x.get()));
            Tensor g = Ones(64);
            pith_tensor *roots[] = {y.get()}, *gs[] = {g.get()};
            ASSERT_EQ(pith_backward(roots, gs, 1, 0), PITH_OK) << pith_last_error();
        }
    });
    double expected = 0;
    for (int t = 0; t < kThreads; t++)
        expected += iterations * ((t + 1) + 1.0);
    for (double v : Values(Grad(x.get()).get()))
        ASSERT_EQ(v, expected) << "a gradient of a thread was lost";
}

TEST_F(EngineConcurrency, ThreadsThroughASharedSubgraphRetainingItAllSucceed)
{
    Tensor x = Leaf({32}, 3.0);
    Tensor h(shim_square(x.get())); // shared: its node saves x
    RunTogether([&h](int t) {
        for (int it = 0; it < 500; it++) {
            Tensor y(shim_scale(h.get(), (double)(t + 1)));
            Tensor g = Ones(32);
            pith_tensor *roots[] = {y.get()}, *gs[] = {g.get()};
            ASSERT_EQ(pith_backward(roots, gs, 1, PITH_RETAIN_GRAPH), PITH_OK)
                << pith_last_error();
        }
    });
    double expected = 0;
    for (int t = 0; t < kThreads; t++)
        expected += 500 * (t + 1) * 2 * 3.0;
    for (double v : Values(Grad(x.get()).get()))
        ASSERT_EQ(v, expected);
}

// Without retain_graph, the last run out frees the shared node's saved values: each thread
// either completes (its gradient counts) or gets PyTorch's "second time" error; never a
// read of freed values (ASan, TSan) and never a lost gradient.
TEST_F(EngineConcurrency, ThreadsThroughASharedSubgraphFreeingItSucceedOrRaise)
{
    for (int round = 0; round < 20; round++) {
        Tensor x = Leaf({32}, 3.0);
        Tensor h(shim_square(x.get()));
        std::atomic<int> succeeded{0};
        RunTogether([&h, &succeeded](int t) {
            Tensor y(shim_scale(h.get(), 1.0));
            Tensor g = Ones(32);
            pith_tensor *roots[] = {y.get()}, *gs[] = {g.get()};
            (void)t;
            if (pith_backward(roots, gs, 1, 0) == PITH_OK)
                succeeded++;
            else
                EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "backward through the graph a second time"));
        });
        ASSERT_GE(succeeded.load(), 1);
        for (double v : Values(Grad(x.get()).get()))
            ASSERT_EQ(v, succeeded.load() * 2 * 3.0) << "round " << round;
        // Released for good: one more backward raises.
        Tensor y(shim_scale(h.get(), 1.0));
        Tensor g = Ones(32);
        pith_tensor *roots[] = {y.get()}, *gs[] = {g.get()};
        EXPECT_NE(pith_backward(roots, gs, 1, 0), PITH_OK);
        EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "backward through the graph a second time"));
    }
}

// A hook that calls backward from inside backward, `left` more levels deep, each level
// through a fresh graph over the same leaf: the inner runs cross the leaf's accumulator,
// which the outer runs still hold (Note [Engine scratch in the node]).
struct Reentrant {
    pith_tensor *leaf;
    int left;
    int deepest;
};

pith_status ReenterHook(void *ctx, const pith_tensor *grad, pith_tensor **replacement);

pith_status BackwardAtLevel(Reentrant *r)
{
    bool enabled = pith_grad_enabled(); // off inside a backward: record, as a checkpoint does
    pith_set_grad_enabled(true);
    pith_tensor *y = shim_scale(r->leaf, 1.0);
    pith_set_grad_enabled(enabled);
    if (!y)
        return pith_last_status();
    pith_node *node = nullptr;
    int64_t id = 0;
    pith_status st = PITH_OK;
    if (r->left > 0)
        st = pith_tensor_register_hook(y, ReenterHook, r, nullptr, &node, &id);
    pith_tensor *roots[] = {y};
    if (st == PITH_OK)
        st = pith_backward(roots, nullptr, 1, 0);
    pith_node_release(node);
    pith_release(y);
    return st;
}

pith_status ReenterHook(void *ctx, const pith_tensor *grad, pith_tensor **replacement)
{
    (void)grad;
    (void)replacement;
    Reentrant *r = static_cast<Reentrant *>(ctx);
    r->left--;
    r->deepest++;
    return BackwardAtLevel(r);
}

TEST_F(EngineConcurrency, ReentrantBackwardWorksAtDepth100)
{
    Tensor x = Leaf({}, 1.0);
    Reentrant r{x.get(), 100, 0};
    ASSERT_EQ(BackwardAtLevel(&r), PITH_OK) << pith_last_error();
    EXPECT_EQ(r.deepest, 100);
    EXPECT_EQ(Values(Grad(x.get()).get()), std::vector<double>{101.0})
        << "every level's gradient reaches the shared leaf";
}

TEST_F(EngineConcurrency, ReentrantBackwardOnSeveralThreadsIntoOneLeaf)
{
    Tensor x = Leaf({}, 1.0);
    RunTogether([&x](int) {
        Reentrant r{x.get(), 100, 0};
        ASSERT_EQ(BackwardAtLevel(&r), PITH_OK) << pith_last_error();
    });
    EXPECT_EQ(Values(Grad(x.get()).get()), std::vector<double>{101.0 * kThreads});
}

TEST_F(EngineConcurrency, ReentrantBackwardPastTheLimitRaisesAndUnwinds)
{
    Tensor x = Leaf({}, 1.0);
    Reentrant r{x.get(), 5000, 0};
    EXPECT_NE(BackwardAtLevel(&r), PITH_OK);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "nested backward calls on this thread"));
    EXPECT_EQ(r.deepest, 1000);
    // The thread is usable again: depth counted back to 0.
    Reentrant again{x.get(), 3, 0};
    pith_tensor *cleared = nullptr;
    ASSERT_EQ(pith_grad_set(x.get(), cleared), PITH_OK);
    ASSERT_EQ(BackwardAtLevel(&again), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(Grad(x.get()).get()), std::vector<double>{4.0});
}

}  // namespace
