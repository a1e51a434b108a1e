/* pith_test.h — the pieces every C++ test suite shares (core, dispatch, kernels): an
 * owning tensor handle, the leak-checking fixture, the error assertion, the list of all
 * dtypes, and element and size read-back. Suite headers bring these into their own
 * namespace with using-declarations; suite-specific helpers stay in those headers. */
#ifndef PITH_TESTS_COMMON_PITH_TEST_H
#define PITH_TESTS_COMMON_PITH_TEST_H

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pith/pith.h"

namespace pith_test {

struct TensorDeleter {
    void operator()(pith_tensor *t) const { pith_release(t); }
};
/* Owns one tensor reference. */
using Tensor = std::unique_ptr<pith_tensor, TensorDeleter>;
using Shape = std::vector<int64_t>;

inline constexpr pith_dtype kAllDtypes[] = {
    PITH_BOOL,  PITH_UINT8,   PITH_INT8,     PITH_INT16,   PITH_INT32,
    PITH_INT64, PITH_FLOAT16, PITH_BFLOAT16, PITH_FLOAT32, PITH_FLOAT64};

/* Every test starts with no error and ends with as many live tensors as it started with. */
class LiveTensorFixture : public ::testing::Test {
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

/* A tensor's elements in row-major order, as doubles. */
inline std::vector<double> Values(const pith_tensor *t)
{
    std::vector<double> out;
    int64_t n = pith_numel(t);
    out.reserve((size_t)n);
    for (int64_t i = 0; i < n; i++) {
        double v = 0;
        EXPECT_EQ(pith_item_at(t, i, &v), PITH_OK) << pith_last_error();
        out.push_back(v);
    }
    return out;
}

/* A tensor's sizes ({-1} if they can't be read). */
inline Shape Sizes(const pith_tensor *t)
{
    int64_t buf[PITH_MAX_DIMS];
    int n = pith_sizes(t, buf);
    return n < 0 ? Shape{-1} : Shape(buf, buf + n);
}

}  // namespace pith_test

#endif
