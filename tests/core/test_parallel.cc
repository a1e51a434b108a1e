/* The thread count, the grain size and fork safety. */
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "core_test.h"

namespace {

class ParallelTest : public CoreTest {
protected:
    int threads_before_ = 0;
    void SetUp() override
    {
        CoreTest::SetUp();
        threads_before_ = pith_get_num_threads();
    }
    void TearDown() override
    {
        pith_set_num_threads(threads_before_);
        CoreTest::TearDown();
    }
};

TEST_F(ParallelTest, DefaultThreadCountIsPositive)
{
    EXPECT_GE(threads_before_, 1);
}

TEST_F(ParallelTest, SetThreadsIsWhatGetReturns)
{
    pith_set_num_threads(3);
    EXPECT_EQ(pith_get_num_threads(), 3);
    pith_set_num_threads(1);
    EXPECT_EQ(pith_get_num_threads(), 1);
}

TEST_F(ParallelTest, NonPositiveThreadCountIsValueErrorAndIgnored)
{
    pith_set_num_threads(2);
    pith_set_num_threads(0);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "expected a positive number, got 0"));
    pith_set_num_threads(-4);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "got -4"));
    EXPECT_EQ(pith_get_num_threads(), 2);
}

TEST_F(ParallelTest, WorkBelowTheGrainSizeRunsSerially)
{
    pith_set_num_threads(8);
    EXPECT_EQ(shim_threads_for(0), 1);
    EXPECT_EQ(shim_threads_for(shim_grain_size() - 1), 1);
}

TEST_F(ParallelTest, ThreadsAreCappedByTheNumberOfGrains)
{
    pith_set_num_threads(8);
    EXPECT_EQ(shim_threads_for(shim_grain_size()), 1);
    EXPECT_EQ(shim_threads_for(3 * shim_grain_size()), 3);
    EXPECT_EQ(shim_threads_for(int64_t(1) << 40), 8);
}

TEST_F(ParallelTest, AForkedChildRunsSerially)
{
    pith_set_num_threads(4);
    ASSERT_EQ(shim_threads_for(int64_t(1) << 30), 4);
    pid_t pid = fork();
    ASSERT_NE(pid, -1);
    if (pid == 0)
        _exit(shim_threads_for(int64_t(1) << 30) == 1 ? 0 : 1);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(shim_threads_for(int64_t(1) << 30), 4); /* the parent is unaffected */
}

TEST(ParallelEnvTest, ThreadCountComesFromTheEnvironment)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    setenv("PITH_NUM_THREADS", "3", 1);
    EXPECT_EXIT(std::exit(pith_get_num_threads() == 3 ? 0 : 1), ::testing::ExitedWithCode(0),
                "");
    unsetenv("PITH_NUM_THREADS");
}

} // namespace
