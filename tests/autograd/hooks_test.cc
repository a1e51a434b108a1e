// hooks_test.cc — hooks from C (autograd/hooks.c, saved_hooks.c, anomaly.c): node pre- and
// post-hooks in PyTorch's order with tensor hooks and retain_grad, replacement, removal
// (also from inside a running hook), errors, post-accumulate-grad hooks, saved-tensor
// hooks, and anomaly detection's NaN check. Every test ends with no live node or tensor.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/pith_test.h"
#include "live_nodes.h"
#include "pith/autograd.h"
#include "pith/pith.h"

namespace {

using pith_test::HasError;
using pith_test::Tensor;
using pith_test::Values;

using Hooks = LiveNodesFixture;

Tensor Leaf(std::vector<int64_t> sizes, double value)
{
    Tensor t(pith_full((int)sizes.size(), sizes.data(), value, PITH_FLOAT64));
    EXPECT_EQ(pith_set_requires_grad(t.get(), true), PITH_OK);
    return t;
}

Tensor Full(std::vector<int64_t> sizes, double value)
{
    return Tensor(pith_full((int)sizes.size(), sizes.data(), value, PITH_FLOAT64));
}

Tensor Grad(const pith_tensor *t)
{
    pith_tensor *g = nullptr;
    EXPECT_EQ(pith_grad_get(t, &g), PITH_OK);
    return Tensor(g);
}

pith_status Backward(const pith_tensor *y)
{
    pith_tensor *roots[] = {(pith_tensor *)y};
    return pith_backward(roots, nullptr, 1, 0);
}

struct Node {
    pith_node *n;
    explicit Node(pith_node *node) : n(node) {}
    ~Node() { pith_node_release(n); }
};

// What the hooks saw, in order.
std::vector<std::string> events;

pith_status tensor_hook(void *ctx, const pith_tensor *, pith_tensor **)
{
    events.push_back((const char *)ctx);
    return PITH_OK;
}

pith_status pre_hook(void *ctx, pith_node *node, pith_tensor **grads, int n)
{
    events.push_back(std::string((const char *)ctx) + ":" + pith_node_name(node) + ":" +
                     std::to_string(n));
    return PITH_OK;
}

pith_status post_hook(void *ctx, pith_node *node, pith_tensor **grad_inputs, int ninputs,
                      pith_tensor *const *grad_outputs, int noutputs)
{
    events.push_back(std::string((const char *)ctx) + ":" + pith_node_name(node) + ":" +
                     std::to_string(ninputs) + "," + std::to_string(noutputs));
    return PITH_OK;
}

pith_status accumulate_hook(void *ctx, pith_tensor *leaf)
{
    Tensor g = Grad(leaf);
    events.push_back(std::string((const char *)ctx) + ":" + (g ? "grad" : "none"));
    return PITH_OK;
}

TEST_F(Hooks, RunInPyTorchsOrderOnEveryNodeKind)
{
    events.clear();
    Tensor x = Leaf({2}, 3.0);
    Tensor y(pith_mul(x.get(), x.get()));
    Tensor z(pith_sum(y.get(), 0, nullptr, false));
    Node mul(pith_grad_fn(y.get()));
    pith_node *acc_raw = nullptr;
    int input_nr = -1;
    ASSERT_EQ(pith_node_next(mul.n, 0, &acc_raw, &input_nr), PITH_OK);
    Node acc(acc_raw);
    int64_t id;
    pith_node *site;
    ASSERT_EQ(pith_node_register_hook(mul.n, post_hook, (void *)"post1", nullptr, &id), PITH_OK);
    ASSERT_EQ(pith_node_register_prehook(mul.n, pre_hook, (void *)"pre1", nullptr, &id), PITH_OK);
    ASSERT_EQ(pith_node_register_hook(mul.n, post_hook, (void *)"post2", nullptr, &id), PITH_OK);
    ASSERT_EQ(pith_node_register_prehook(mul.n, pre_hook, (void *)"pre2", nullptr, &id), PITH_OK);
    ASSERT_EQ(pith_retain_grad(y.get()), PITH_OK);
    ASSERT_EQ(pith_tensor_register_hook(y.get(), tensor_hook, (void *)"tensor", nullptr, &site, &id),
              PITH_OK);
    pith_node_release(site);
    ASSERT_EQ(pith_node_register_hook(acc.n, post_hook, (void *)"accpost", nullptr, &id), PITH_OK);
    ASSERT_EQ(pith_node_register_prehook(acc.n, pre_hook, (void *)"accpre", nullptr, &id), PITH_OK);
    ASSERT_EQ(pith_tensor_register_post_accumulate_grad_hook(x.get(), accumulate_hook,
                                                             (void *)"postacc", nullptr, &site, &id),
              PITH_OK);
    EXPECT_EQ(site, acc.n) << "a post-accumulate-grad hook lives on the leaf's accumulator";
    pith_node_release(site);
    ASSERT_EQ(Backward(z.get()), PITH_OK) << pith_last_error();
    std::vector<std::string> expected = {
        "tensor",                  "pre1:MulBackward0:1",      "pre2:MulBackward0:1",
        "post1:MulBackward0:2,1", "post2:MulBackward0:2,1",   "accpre:AccumulateGrad:1",
        "postacc:grad",            "accpost:AccumulateGrad:0,1"};
    EXPECT_EQ(events, expected);
    EXPECT_EQ(Values(Grad(x.get()).get()), (std::vector<double>{6.0, 6.0}));
}

pith_status double_pre(void *, pith_node *, pith_tensor **grads, int n)
{
    for (int i = 0; i < n; i++) {
        pith_tensor *two = pith_full(0, nullptr, 2.0, PITH_FLOAT64);
        pith_tensor *doubled = pith_mul(grads[i], two);
        pith_release(two);
        if (!doubled)
            return pith_last_status();
        pith_release(grads[i]);
        grads[i] = doubled;
    }
    return PITH_OK;
}

pith_status drop_first_post(void *, pith_node *, pith_tensor **grad_inputs, int, pith_tensor *const *,
                            int)
{
    pith_release(grad_inputs[0]);
    grad_inputs[0] = nullptr;
    return PITH_OK;
}

TEST_F(Hooks, PreHookReplacesWhatTheNodeSeesAndPostHookWhatItGives)
{
    Tensor x = Leaf({3}, 1.0), w = Leaf({3}, 5.0);
    Tensor y(pith_mul(x.get(), w.get()));
    Tensor z(pith_sum(y.get(), 0, nullptr, false));
    Node mul(pith_grad_fn(y.get()));
    int64_t pre, post;
    ASSERT_EQ(pith_node_register_prehook(mul.n, double_pre, nullptr, nullptr, &pre), PITH_OK);
    ASSERT_EQ(pith_node_register_hook(mul.n, drop_first_post, nullptr, nullptr, &post), PITH_OK);
    ASSERT_EQ(Backward(z.get()), PITH_OK) << pith_last_error();
    EXPECT_FALSE(Grad(x.get())) << "the post-hook dropped x's gradient";
    EXPECT_EQ(Values(Grad(w.get()).get()), (std::vector<double>{2.0, 2.0, 2.0}));
}

pith_status wrong_shape_pre(void *, pith_node *, pith_tensor **grads, int)
{
    int64_t five = 5;
    pith_release(grads[0]);
    grads[0] = pith_full(1, &five, 1.0, PITH_FLOAT64);
    return PITH_OK;
}

pith_status failing_post(void *, pith_node *, pith_tensor **, int, pith_tensor *const *, int)
{
    return pith_set_error(PITH_ERR_VALUE, "the hook refuses");
}

TEST_F(Hooks, ErrorsOfHooksStopBackward)
{
    Tensor x = Leaf({3}, 1.0);
    Tensor y(pith_mul(x.get(), x.get()));
    Tensor z(pith_sum(y.get(), 0, nullptr, false));
    Node sum(pith_grad_fn(z.get()));
    int64_t id;
    ASSERT_EQ(pith_node_register_prehook(sum.n, wrong_shape_pre, nullptr, nullptr, &id), PITH_OK);
    EXPECT_EQ(Backward(z.get()), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "changed the size or type"));
    ASSERT_EQ(pith_node_remove_hook(sum.n, id), PITH_OK);
    Tensor y2(pith_mul(x.get(), x.get()));
    Tensor z2(pith_sum(y2.get(), 0, nullptr, false));
    Node sum2(pith_grad_fn(z2.get()));
    ASSERT_EQ(pith_node_register_hook(sum2.n, failing_post, nullptr, nullptr, &id), PITH_OK);
    EXPECT_EQ(Backward(z2.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "the hook refuses"));
    EXPECT_FALSE(Grad(x.get()));
}

struct SelfRemoving {
    pith_node *node;
    int64_t id;
    int calls;
};

pith_status self_removing_post(void *ctx, pith_node *, pith_tensor **, int, pith_tensor *const *,
                               int)
{
    auto *s = (SelfRemoving *)ctx;
    s->calls++;
    return pith_node_remove_hook(s->node, s->id);
}

int released_contexts;
void count_release(void *) { released_contexts++; }

TEST_F(Hooks, RemovedHooksStopRunningAndReleaseTheirContext)
{
    released_contexts = 0;
    Tensor x = Leaf({2}, 1.0);
    Tensor y(pith_mul(x.get(), x.get()));
    Tensor z(pith_sum(y.get(), 0, nullptr, false));
    Node mul(pith_grad_fn(y.get()));
    SelfRemoving once = {mul.n, 0, 0};
    ASSERT_EQ(pith_node_register_hook(mul.n, self_removing_post, &once, count_release, &once.id),
              PITH_OK);
    int64_t removed;
    ASSERT_EQ(pith_node_register_prehook(mul.n, pre_hook, (void *)"gone", count_release, &removed),
              PITH_OK);
    ASSERT_EQ(pith_node_remove_hook(mul.n, removed), PITH_OK);
    EXPECT_EQ(released_contexts, 1);
    ASSERT_EQ(pith_node_remove_hook(mul.n, removed), PITH_OK) << "removing twice is a no-op";
    events.clear();
    pith_tensor *roots[] = {z.get()};
    ASSERT_EQ(pith_backward(roots, nullptr, 1, PITH_RETAIN_GRAPH), PITH_OK) << pith_last_error();
    EXPECT_EQ(once.calls, 1);
    EXPECT_EQ(released_contexts, 2) << "a hook that removed itself is freed after it ran";
    ASSERT_EQ(Backward(z.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(once.calls, 1);
    EXPECT_TRUE(events.empty());
}

TEST_F(Hooks, NodeHooksAreFreedWithTheirNode)
{
    released_contexts = 0;
    {
        Tensor x = Leaf({2}, 1.0);
        Tensor y(pith_mul(x.get(), x.get()));
        Node mul(pith_grad_fn(y.get()));
        int64_t id;
        ASSERT_EQ(pith_node_register_hook(mul.n, post_hook, (void *)"p", count_release, &id),
                  PITH_OK);
        ASSERT_EQ(pith_node_register_prehook(mul.n, pre_hook, (void *)"p", count_release, &id),
                  PITH_OK);
    }
    EXPECT_EQ(released_contexts, 2);
}

TEST_F(Hooks, PostAccumulateGradHookErrors)
{
    Tensor plain = Full({2}, 1.0);
    pith_node *site = nullptr;
    int64_t id;
    EXPECT_EQ(pith_tensor_register_post_accumulate_grad_hook(plain.get(), accumulate_hook, nullptr,
                                                             nullptr, &site, &id),
              PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME,
                         "cannot register a hook on a tensor that doesn't require gradient"));
    Tensor x = Leaf({2}, 1.0);
    Tensor y(pith_mul(x.get(), x.get()));
    EXPECT_EQ(pith_tensor_register_post_accumulate_grad_hook(y.get(), accumulate_hook, nullptr,
                                                             nullptr, &site, &id),
              PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME,
                         "post accumulate grad hooks cannot be registered on non-leaf tensors"));
}

TEST_F(Hooks, PostAccumulateGradHookDoesNotRunForGrad)
{
    events.clear();
    Tensor x = Leaf({2}, 1.0);
    Tensor y(pith_mul(x.get(), x.get()));
    Tensor z(pith_sum(y.get(), 0, nullptr, false));
    pith_node *site = nullptr;
    int64_t id;
    ASSERT_EQ(pith_tensor_register_post_accumulate_grad_hook(x.get(), accumulate_hook,
                                                             (void *)"postacc", nullptr, &site, &id),
              PITH_OK);
    Node acc(site);
    pith_tensor *roots[] = {z.get()}, *inputs[] = {x.get()}, *grads[1] = {nullptr};
    ASSERT_EQ(pith_autograd_grad(roots, nullptr, 1, inputs, 1, grads, 0), PITH_OK);
    Tensor g(grads[0]);
    EXPECT_TRUE(events.empty());
}

// ---- saved-tensor hooks ----

struct Packed {
    pith_tensor *t;
};
int packs, unpacks, releases;

pith_status clone_pack(void *ctx, pith_tensor *t, void **packed)
{
    packs++;
    EXPECT_FALSE(pith_grad_enabled()) << "pack runs with grad mode off";
    pith_tensor *copy = pith_clone(t);
    if (!copy)
        return pith_last_status();
    *packed = new Packed{copy};
    return PITH_OK;
}

pith_status clone_unpack(void *packed, pith_tensor **out)
{
    unpacks++;
    pith_retain(((Packed *)packed)->t);
    *out = ((Packed *)packed)->t;
    return PITH_OK;
}

void clone_release(void *packed)
{
    releases++;
    pith_release(((Packed *)packed)->t);
    delete (Packed *)packed;
}

const pith_saved_tensors_hooks clone_hooks = {clone_pack, clone_unpack, clone_release};

TEST_F(Hooks, SavedTensorHooksPackAndUnpackEverySavedTensor)
{
    packs = unpacks = releases = 0;
    Tensor x = Leaf({3}, 2.0);
    ASSERT_EQ(pith_saved_tensors_hooks_push(&clone_hooks, nullptr, nullptr), PITH_OK);
    Tensor y(pith_mul(x.get(), x.get()));
    ASSERT_EQ(pith_saved_tensors_hooks_pop(), PITH_OK);
    Tensor e(pith_exp(y.get())); /* not packed: the hooks were popped */
    Tensor z(pith_sum(e.get(), 0, nullptr, false));
    EXPECT_EQ(packs, 2) << "mul saves both inputs";
    ASSERT_EQ(Backward(z.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(unpacks, 2);
    EXPECT_EQ(releases, 2) << "backward without retain_graph releases the packed values";
    double e4 = 0;
    ASSERT_EQ(pith_item_at(e.get(), 0, &e4), PITH_OK);
    EXPECT_DOUBLE_EQ(Values(Grad(x.get()).get())[0], e4 * 2 * 2.0);
    EXPECT_EQ(Backward(z.get()), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "Trying to backward through the graph a second time"));
}

TEST_F(Hooks, SavedTensorHooksSkipTheVersionCheck)
{
    Tensor x = Leaf({2}, 2.0);
    Tensor a(pith_mul(x.get(), x.get()));
    ASSERT_EQ(pith_saved_tensors_hooks_push(&clone_hooks, nullptr, nullptr), PITH_OK);
    Tensor y(pith_exp(a.get()));
    ASSERT_EQ(pith_saved_tensors_hooks_pop(), PITH_OK);
    Tensor z(pith_sum(y.get(), 0, nullptr, false));
    bool grad_was = pith_grad_enabled();
    pith_set_grad_enabled(false);
    ASSERT_EQ(pith_sqrt_(y.get()), PITH_OK);
    pith_set_grad_enabled(grad_was);
    ASSERT_EQ(Backward(z.get()), PITH_OK) << "the packed copy is the user's: " << pith_last_error();
}

TEST_F(Hooks, DisablingSavedTensorHooks)
{
    ASSERT_EQ(pith_saved_tensors_hooks_disable("no hooks here"), PITH_OK);
    EXPECT_STREQ(pith_saved_tensors_hooks_disabled_message(), "no hooks here");
    EXPECT_EQ(pith_saved_tensors_hooks_push(&clone_hooks, nullptr, nullptr), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "no hooks here"));
    ASSERT_EQ(pith_saved_tensors_hooks_disable(nullptr), PITH_OK);
    EXPECT_EQ(pith_saved_tensors_hooks_disabled_message(), nullptr);
    ASSERT_EQ(pith_saved_tensors_hooks_push(&clone_hooks, nullptr, nullptr), PITH_OK);
    EXPECT_EQ(pith_saved_tensors_hooks_disable("late"), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "late"));
    ASSERT_EQ(pith_saved_tensors_hooks_pop(), PITH_OK);
    EXPECT_EQ(pith_saved_tensors_hooks_pop(), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "no saved tensor hooks are pushed"));
}

// ---- anomaly mode ----

int records, reports, record_releases;
std::string reported;
void *record_where() { return new int(++records); }
void report_where(void *, const char *name)
{
    reports++;
    reported = name;
    pith_clear_error(); /* the engine keeps its error whatever the report does */
}
void release_where(void *r)
{
    record_releases++;
    delete (int *)r;
}
const pith_anomaly_hooks where_hooks = {record_where, report_where, release_where};

TEST_F(Hooks, AnomalyModeNamesTheNodeThatReturnedNan)
{
    records = reports = record_releases = 0;
    pith_set_anomaly_hooks(&where_hooks);
    pith_set_detect_anomaly(true, true);
    EXPECT_TRUE(pith_is_anomaly_enabled());
    EXPECT_TRUE(pith_is_anomaly_check_nan_enabled());
    {
        Tensor x = Leaf({2}, 0.0);
        Tensor y(pith_sqrt(x.get()));
        Tensor zero = Full({}, 0.0);
        Tensor z(pith_mul(y.get(), zero.get()));
        Tensor s(pith_sum(z.get(), 0, nullptr, false));
        EXPECT_EQ(records, 4) << "SqrtBackward0, MulBackward0, SumBackward1 and x's AccumulateGrad";
        EXPECT_EQ(Backward(s.get()), PITH_ERR_RUNTIME);
        EXPECT_TRUE(HasError(PITH_ERR_RUNTIME,
                             "Function 'SqrtBackward0' returned nan values in its 0th output."));
        EXPECT_EQ(reports, 1);
        EXPECT_EQ(reported, "SqrtBackward0");
    }
    EXPECT_EQ(record_releases, 4);
    pith_set_detect_anomaly(true, false);
    {
        Tensor x = Leaf({2}, 0.0);
        Tensor y(pith_sqrt(x.get()));
        Tensor zero = Full({}, 0.0);
        Tensor z(pith_mul(y.get(), zero.get()));
        Tensor s(pith_sum(z.get(), 0, nullptr, false));
        EXPECT_EQ(Backward(s.get()), PITH_OK) << "check_nan=False lets NaN through";
    }
    pith_set_detect_anomaly(false, true);
    pith_set_anomaly_hooks(nullptr);
    EXPECT_FALSE(pith_is_anomaly_enabled());
}

}  // namespace
