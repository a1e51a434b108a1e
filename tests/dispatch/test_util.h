/* test_util.h — the fixture (from common/pith_test.h) and helpers of the dispatch tests. */
#ifndef PITH_TESTS_DISPATCH_TEST_UTIL_H
#define PITH_TESTS_DISPATCH_TEST_UTIL_H

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "common/pith_test.h"
#include "pith/dispatch.h"
#include "pith/interpreter.h"
#include "pith/pith.h"

/* Every test starts with a clean error and ends with as many live tensors as it began. */
using DispatchTest = pith_test::LiveTensorFixture;

/* Owns a stack for the length of a test. */
struct StackPtr {
    pith_stack *s = pith_stack_new();
    ~StackPtr() { pith_stack_free(s); }
    operator pith_stack *() const { return s; }
};

/* Owns a tensor reference. */
struct TensorPtr {
    pith_tensor *t = nullptr;
    TensorPtr() = default;
    explicit TensorPtr(pith_tensor *p) : t(p) {}
    TensorPtr(const TensorPtr &) = delete;
    TensorPtr &operator=(const TensorPtr &) = delete;
    ~TensorPtr() { pith_release(t); }
    pith_tensor *get() const { return t; }
    operator pith_tensor *() const { return t; }
};

/* A namespace of its own for each call ("t_conc1", "t_conc2", ...), so that a test that
 * defines ops can run again in the same process (--gtest_repeat). */
inline std::string fresh_namespace(const char *base)
{
    static std::atomic<int> counter{0};
    return base + std::to_string(++counter);
}

inline pith_tensor *make_tensor(std::vector<float> values)
{
    int64_t n = (int64_t)values.size();
    return pith_from_data(values.data(), 1, &n, PITH_FLOAT32);
}

inline pith_tensor *make_meta(int64_t n)
{
    int64_t stride = 1;
    return pith_empty_strided(1, &n, &stride, PITH_FLOAT32, PITH_META);
}

inline std::vector<float> tensor_values(const pith_tensor *t)
{
    std::vector<float> out;
    int64_t n = pith_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = 0;
        EXPECT_EQ(pith_item_at(t, i, &v), PITH_OK) << pith_last_error();
        out.push_back((float)v);
    }
    return out;
}

inline bool error_contains(const char *fragment)
{
    return std::string(pith_last_error()).find(fragment) != std::string::npos;
}

#define EXPECT_ERROR(status, fragment)                                                      \
    do {                                                                                    \
        EXPECT_EQ(pith_last_status(), (status)) << pith_last_error();                       \
        EXPECT_TRUE(error_contains(fragment))                                               \
            << "message: " << pith_last_error() << "\nexpected fragment: " << (fragment);   \
    } while (0)

#endif /* PITH_TESTS_DISPATCH_TEST_UTIL_H */
