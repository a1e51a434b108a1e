// keys_test.cc — key names and the thread-local include/exclude guards.
#include <thread>

#include "dispatch_shim.h"
#include "test_util.h"

namespace {

using Keys = DispatchTest;

TEST_F(Keys, NamesRoundTrip)
{
    const char *names[] = {"CPU", "Meta", "Python", "PythonMode", "Autograd"};
    for (int k = 0; k < 5; k++) {
        EXPECT_STREQ(shim_key_name(k), names[k]);
        EXPECT_EQ(shim_key_from_name(names[k]), k);
    }
    EXPECT_EQ(shim_key_name(5), nullptr);
    EXPECT_EQ(shim_key_name(-1), nullptr);
    EXPECT_EQ(shim_key_from_name("cpu"), -1);
    EXPECT_EQ(shim_key_from_name(nullptr), -1);
}

// Modes and subclasses sit below Autograd: they see the ops that forward and backward run,
// never the recording (ARCHITECTURE.md, "Autograd").
TEST_F(Keys, PriorityOrderIsAutogradPythonModePythonBackends)
{
    EXPECT_GT(shim_key_bit("Autograd"), shim_key_bit("PythonMode"));
    EXPECT_GT(shim_key_bit("PythonMode"), shim_key_bit("Python"));
    EXPECT_GT(shim_key_bit("Python"), shim_key_bit("Meta"));
    EXPECT_GT(shim_key_bit("Meta"), shim_key_bit("CPU"));
}

TEST_F(Keys, FreshThreadHasEmptySets)
{
    pith_keys_guard g = pith_keys_current();
    EXPECT_EQ(g.included, 0u);
    EXPECT_EQ(g.excluded, 0u);
}

TEST_F(Keys, ExcludeThenRestore)
{
    pith_keys_guard saved;
    ASSERT_EQ(pith_keys_exclude("Python", &saved), PITH_OK);
    EXPECT_EQ(saved.excluded, 0u);
    EXPECT_EQ(pith_keys_current().excluded, shim_key_bit("Python"));
    EXPECT_EQ(pith_keys_current().included, 0u);
    pith_keys_restore(&saved);
    EXPECT_EQ(pith_keys_current().excluded, 0u);
}

TEST_F(Keys, IncludeThenRestore)
{
    pith_keys_guard saved;
    ASSERT_EQ(pith_keys_include("Autograd", &saved), PITH_OK);
    EXPECT_EQ(pith_keys_current().included, shim_key_bit("Autograd"));
    pith_keys_restore(&saved);
    EXPECT_EQ(pith_keys_current().included, 0u);
}

TEST_F(Keys, NestedGuardsRestoreInOrder)
{
    pith_keys_guard outer, inner;
    ASSERT_EQ(pith_keys_exclude("Python", &outer), PITH_OK);
    ASSERT_EQ(pith_keys_exclude("PythonMode", &inner), PITH_OK);
    EXPECT_EQ(pith_keys_current().excluded, shim_key_bit("Python") | shim_key_bit("PythonMode"));
    pith_keys_restore(&inner);
    EXPECT_EQ(pith_keys_current().excluded, shim_key_bit("Python"));
    pith_keys_restore(&outer);
    EXPECT_EQ(pith_keys_current().excluded, 0u);
}

TEST_F(Keys, UnknownKeyIsAValueErrorAndChangesNothing)
{
    pith_keys_guard saved{};
    EXPECT_EQ(pith_keys_exclude("python", &saved), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "unknown dispatch key 'python'");
    EXPECT_EQ(pith_keys_include(nullptr, &saved), PITH_ERR_VALUE);
    EXPECT_EQ(pith_keys_current().excluded, 0u);
    EXPECT_EQ(pith_keys_current().included, 0u);
}

TEST_F(Keys, NullSavedIsAValueErrorAndChangesNothing)
{
    EXPECT_EQ(pith_keys_include("Python", nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "`saved` is NULL");
    EXPECT_EQ(pith_keys_current().included, 0u);
    pith_keys_restore(nullptr); // a no-op
}

TEST_F(Keys, SetsAreThreadLocal)
{
    pith_keys_guard saved;
    ASSERT_EQ(pith_keys_exclude("CPU", &saved), PITH_OK);
    pith_keys_guard other{1, 1};
    std::thread t([&] { other = pith_keys_current(); });
    t.join();
    pith_keys_restore(&saved);
    EXPECT_EQ(other.included, 0u);
    EXPECT_EQ(other.excluded, 0u);
}

} // namespace
