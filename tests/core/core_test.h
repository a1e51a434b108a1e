/* core_test.h — the fixture and helpers shared by the core tests. */
#ifndef PITH_TESTS_CORE_TEST_H
#define PITH_TESTS_CORE_TEST_H

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core_shim.h"
#include "pith/interpreter.h"
#include "pith/pith.h"

struct TensorDeleter {
    void operator()(pith_tensor *t) const { pith_release(t); }
};
using Tensor = std::unique_ptr<pith_tensor, TensorDeleter>;

/* Every test starts with no error and ends with as many live tensors as it started with. */
class CoreTest : public ::testing::Test {
protected:
    size_t live_before_ = 0;
    void SetUp() override
    {
        pith_clear_error();
        live_before_ = pith_live_tensors();
    }
    void TearDown() override { EXPECT_EQ(pith_live_tensors(), live_before_); }
};

/* Checks this thread's error status and a fragment of its message, then clears it. */
inline ::testing::AssertionResult HasError(pith_status status, const std::string &fragment)
{
    pith_status got = pith_last_status();
    std::string msg = pith_last_error();
    pith_clear_error();
    if (got != status)
        return ::testing::AssertionFailure()
               << "status " << pith_status_name(got) << " (\"" << msg << "\"), expected "
               << pith_status_name(status);
    if (msg.find(fragment) == std::string::npos)
        return ::testing::AssertionFailure()
               << "message \"" << msg << "\" lacks \"" << fragment << "\"";
    return ::testing::AssertionSuccess();
}

#endif
