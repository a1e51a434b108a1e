/* The thread-local error protocol. */
#include <string>
#include <thread>

#include "core_test.h"

namespace {

class ErrorTest : public CoreTest {};

TEST_F(ErrorTest, NoErrorMeansOkAndAnEmptyMessage)
{
    EXPECT_EQ(pith_last_status(), PITH_OK);
    EXPECT_STREQ(pith_last_error(), "");
}

TEST_F(ErrorTest, SetErrorFormatsTheMessageAndReturnsTheStatus)
{
    EXPECT_EQ(pith_set_error(PITH_ERR_INDEX, "index %d of %s", 7, "x"), PITH_ERR_INDEX);
    EXPECT_EQ(pith_last_status(), PITH_ERR_INDEX);
    EXPECT_STREQ(pith_last_error(), "index 7 of x");
}

TEST_F(ErrorTest, ClearResetsStatusAndMessage)
{
    pith_set_error(PITH_ERR_TYPE, "bad");
    pith_clear_error();
    EXPECT_EQ(pith_last_status(), PITH_OK);
    EXPECT_STREQ(pith_last_error(), "");
}

TEST_F(ErrorTest, SettingOkStillRecordsAFailure)
{
    EXPECT_EQ(pith_set_error(PITH_OK, "oops"), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "oops"));
}

TEST_F(ErrorTest, ErrorsAreThreadLocal)
{
    pith_set_error(PITH_ERR_VALUE, "main thread");
    pith_status seen_status = PITH_ERR_RUNTIME;
    std::string seen_message = "unset";
    std::thread worker([&] {
        seen_status = pith_last_status();
        seen_message = pith_last_error();
        pith_set_error(PITH_ERR_NOMEM, "worker");
    });
    worker.join();
    EXPECT_EQ(seen_status, PITH_OK);
    EXPECT_EQ(seen_message, "");
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "main thread"));
}

TEST_F(ErrorTest, MessageMayQuoteThePreviousMessage)
{
    pith_set_error(PITH_ERR_VALUE, "inner problem");
    pith_set_error(PITH_ERR_VALUE, "outer: %s", pith_last_error());
    EXPECT_STREQ(pith_last_error(), "outer: inner problem");
    pith_clear_error();
}

TEST_F(ErrorTest, ErrorPrefixKeepsTheStatusAndPrependsContext)
{
    pith_set_error(PITH_ERR_INDEX, "dim 3 out of range");
    EXPECT_EQ(shim_error_prefix("sum"), PITH_ERR_INDEX);
    EXPECT_STREQ(pith_last_error(), "sum: dim 3 out of range");
    pith_clear_error();
    EXPECT_EQ(shim_error_prefix("sum"), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "sum: unknown error"));
}

TEST_F(ErrorTest, OverlongMessagesAreTruncatedNotOverflowed)
{
    std::string big(5000, 'x');
    pith_set_error(PITH_ERR_VALUE, "%s", big.c_str());
    std::string got = pith_last_error();
    EXPECT_GT(got.size(), 500u);
    EXPECT_LT(got.size(), big.size());
    EXPECT_EQ(got.find_first_not_of('x'), std::string::npos);
    pith_clear_error();
}

TEST_F(ErrorTest, StatusNamesAreTheEnumNames)
{
    EXPECT_STREQ(pith_status_name(PITH_OK), "PITH_OK");
    EXPECT_STREQ(pith_status_name(PITH_ERR_VALUE), "PITH_ERR_VALUE");
    EXPECT_STREQ(pith_status_name(PITH_ERR_TYPE), "PITH_ERR_TYPE");
    EXPECT_STREQ(pith_status_name(PITH_ERR_INDEX), "PITH_ERR_INDEX");
    EXPECT_STREQ(pith_status_name(PITH_ERR_NOMEM), "PITH_ERR_NOMEM");
    EXPECT_STREQ(pith_status_name(PITH_ERR_NOT_IMPLEMENTED), "PITH_ERR_NOT_IMPLEMENTED");
    EXPECT_STREQ(pith_status_name(PITH_ERR_RUNTIME), "PITH_ERR_RUNTIME");
    EXPECT_STREQ(pith_status_name(PITH_ERR_INTERPRETER), "PITH_ERR_INTERPRETER");
    EXPECT_STREQ(pith_status_name((pith_status)99), "PITH_ERR_UNKNOWN");
}

} // namespace
