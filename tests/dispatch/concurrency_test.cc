// concurrency_test.cc — op calls on several threads while another thread defines ops and
// registers and unregisters kernels (run under TSan by the CI: -R Concurrency). See Note
// [Registry concurrency] in dispatch/registry.h.
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

pith_status conc_scale_cpu(const pith_op *, pith_stack *s, void *)
{
    pith_tensor *x = pith_stack_get_tensor(s, 0);
    double factor = pith_stack_get_double(s, 1);
    std::vector<float> values;
    const float *data = static_cast<const float *>(pith_data_ptr(x));
    for (int64_t i = 0; i < pith_numel(x); i++)
        values.push_back((float)(data[i] * factor));
    pith_release(x);
    pith_stack_drop(s, 2);
    return pith_stack_push_tensor_steal(s, make_tensor(values));
}

pith_status conc_autograd(const pith_op *op, pith_stack *s, void *ctx)
{
    static_cast<std::atomic<int> *>(ctx)->fetch_add(1, std::memory_order_relaxed);
    return pith_call_boxed_below(op, s, "Autograd");
}

// Collects the first failure of any thread (gtest assertions are not for worker threads).
struct Failures {
    std::mutex mutex;
    std::string first;
    std::atomic<int> count{0};
    void add(const std::string &what)
    {
        if (count.fetch_add(1) == 0) {
            std::lock_guard<std::mutex> lock(mutex);
            first = what;
        }
    }
};

using DispatchConcurrency = DispatchTest;

TEST(DispatchConcurrencyStatic, OpsLiveAtStableAddresses)
{
    // Pointers taken before many definitions stay the same afterwards (no reallocation).
    const pith_op *add = pith_op_find("add");
    std::string ns = fresh_namespace("t_stable");
    size_t first = pith_op_count();
    for (int i = 0; i < 600; i++)
        ASSERT_EQ(pith_op_define((ns + "::op" + std::to_string(i) + "(Tensor x) -> Tensor")
                                     .c_str()),
                  PITH_OK);
    EXPECT_EQ(pith_op_find("add"), add);
    EXPECT_EQ(pith_op_at(first), pith_op_find((ns + "::op0").c_str()));
    EXPECT_EQ(pith_op_at(first + 599), pith_op_find((ns + "::op599").c_str()));
    EXPECT_EQ(pith_op_name(pith_op_at(first + 300)), ns + "::op300");
}

TEST_F(DispatchConcurrency, CallsWhileRegistering)
{
    const std::string ns = fresh_namespace("t_conc"), scale_name = ns + "::scale";
    ASSERT_EQ(pith_op_define((scale_name + "(Tensor x, float s=2) -> Tensor").c_str()), PITH_OK);
    ASSERT_EQ(pith_kernel_register(scale_name.c_str(), "CPU", conc_scale_cpu, nullptr), PITH_OK);
    const pith_op *scale = pith_op_find(scale_name.c_str());
    std::atomic<int> autograd_calls{0};
    std::atomic<bool> done{false};
    Failures failures;
    const int kCallers = 3, kIterations = 300;

    auto caller = [&](int id) {
        TensorPtr x(make_tensor({1, 2, 3})), y(make_tensor({10, 20, 30}));
        pith_keys_guard g;
        pith_keys_include("Autograd", &g);
        for (int i = 0; i < kIterations; i++) {
            pith_stack *s = pith_stack_new();
            pith_stack_push_tensor(s, x);
            if (pith_call_boxed(scale, s) != PITH_OK) {
                failures.add("boxed call: " + std::string(pith_last_error()));
            } else {
                TensorPtr r(pith_stack_get_tensor(s, 0));
                if (tensor_values(r) != std::vector<float>{2, 4, 6})
                    failures.add("boxed call: wrong values");
            }
            pith_stack_free(s);
            TensorPtr sum(pith_add(x, y));
            if (!sum.get())
                failures.add("pith_add: " + std::string(pith_last_error()));
            else if (tensor_values(sum) != std::vector<float>{11, 22, 33})
                failures.add("pith_add: wrong values");
            if (!pith_op_find(i % 2 ? "add" : scale_name.c_str()))
                failures.add("pith_op_find failed");
        }
        pith_keys_restore(&g);
        (void)id;
    };

    auto writer = [&] {
        for (int i = 0; !done.load(); i++) {
            std::string name = ns + "::op" + std::to_string(i);
            if (pith_op_define((name + "(Tensor x, int n=1) -> Tensor").c_str()) != PITH_OK)
                failures.add("define: " + std::string(pith_last_error()));
            if (pith_kernel_register(name.c_str(), "CPU", conc_scale_cpu, nullptr) != PITH_OK)
                failures.add("register: " + std::string(pith_last_error()));
            if (pith_kernel_register(scale_name.c_str(), "Autograd", conc_autograd,
                                     &autograd_calls) != PITH_OK)
                failures.add("register autograd: " + std::string(pith_last_error()));
            std::this_thread::yield();
            if (pith_kernel_unregister(scale_name.c_str(), "Autograd") != PITH_OK)
                failures.add("unregister: " + std::string(pith_last_error()));
            if (pith_op_at(pith_op_count() - 1) == nullptr)
                failures.add("pith_op_at failed");
        }
    };

    std::thread w(writer);
    std::vector<std::thread> callers;
    for (int i = 0; i < kCallers; i++)
        callers.emplace_back(caller, i);
    for (auto &t : callers)
        t.join();
    done = true;
    w.join();
    EXPECT_EQ(failures.count.load(), 0) << failures.first;
}

TEST_F(DispatchConcurrency, DefinitionsFromManyThreads)
{
    const int kThreads = 4, kPerThread = 50;
    const std::string ns = fresh_namespace("t_conc_def");
    size_t before = pith_op_count();
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++)
        threads.emplace_back([&, t] {
            for (int i = 0; i < kPerThread; i++) {
                std::string name = ns + "::op_" + std::to_string(t) + "_" + std::to_string(i);
                if (pith_op_define((name + "(Tensor x) -> Tensor").c_str()) != PITH_OK ||
                    pith_op_find(name.c_str()) == nullptr)
                    errors++;
                // Everyone also races to define one shared name: exactly one wins.
                pith_op_define((ns + "::shared(Tensor x) -> Tensor").c_str());
            }
        });
    for (auto &th : threads)
        th.join();
    pith_clear_error();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(pith_op_count(), before + kThreads * kPerThread + 1);
    EXPECT_NE(pith_op_find((ns + "::shared").c_str()), nullptr);
}

} // namespace
