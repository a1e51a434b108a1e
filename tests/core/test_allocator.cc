/* The allocator: alignment, size classes, and the cache of large freed blocks. */
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "core_test.h"

namespace {

constexpr size_t MiB = size_t(1) << 20;

/* Each test starts from an empty cache with the default limit and restores it after. */
class AllocatorTest : public CoreTest {
protected:
    size_t limit_before_ = 0;
    void SetUp() override
    {
        CoreTest::SetUp();
        limit_before_ = pith_cache_limit();
        pith_cache_empty();
    }
    void TearDown() override
    {
        pith_cache_set_limit(limit_before_);
        pith_cache_empty();
        CoreTest::TearDown();
    }
};

TEST_F(AllocatorTest, BlocksAre64ByteAligned)
{
    for (size_t n : {size_t(1), size_t(63), size_t(4096), MiB + 3, 3 * MiB}) {
        void *p = shim_alloc(n);
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
        std::memset(p, 0xab, n); /* the whole request is usable */
        shim_free(p, n);
    }
}

TEST_F(AllocatorTest, LargeRequestsRoundUpToAQuarterOfTheirPowerOfTwo)
{
    EXPECT_EQ(shim_size_class(MiB), MiB);
    EXPECT_EQ(shim_size_class(MiB + 1), MiB + MiB / 4);
    EXPECT_EQ(shim_size_class(3 * MiB), 3 * MiB);
    EXPECT_EQ(shim_size_class(4 * MiB + 1), 5 * MiB);
    EXPECT_EQ(shim_size_class(7 * MiB + 1), 8 * MiB);
    EXPECT_EQ(shim_size_class(shim_cache_min_block()), shim_cache_min_block());
    EXPECT_EQ(shim_size_class(shim_cache_min_block() + 1),
              shim_cache_min_block() + shim_cache_min_block() / 4);
    EXPECT_EQ(shim_size_class(100), 128u);
    EXPECT_EQ(shim_size_class(64), 64u);
}

TEST_F(AllocatorTest, DefaultLimitIs256MiB)
{
    if (std::getenv("PITH_CACHE_LIMIT"))
        GTEST_SKIP() << "PITH_CACHE_LIMIT is set";
    EXPECT_EQ(limit_before_, 256 * MiB);
    EXPECT_EQ(shim_cache_default_limit(), 256 * MiB);
}

TEST_F(AllocatorTest, FreedLargeBlockIsReusedForTheSameSizeClass)
{
    void *p = shim_alloc(4 * MiB);
    ASSERT_NE(p, nullptr);
    shim_free(p, 4 * MiB);
    EXPECT_EQ(pith_cache_bytes(), 4 * MiB);
    void *q = shim_alloc(4 * MiB - 1000); /* same class */
    EXPECT_EQ(q, p);
    EXPECT_EQ(pith_cache_bytes(), 0u);
    shim_free(q, 4 * MiB - 1000);
}

TEST_F(AllocatorTest, OtherSizeClassesDoNotReuseTheBlock)
{
    void *p = shim_alloc(4 * MiB);
    shim_free(p, 4 * MiB);
    void *q = shim_alloc(2 * MiB);
    EXPECT_EQ(pith_cache_bytes(), 4 * MiB);
    shim_free(q, 2 * MiB);
    EXPECT_EQ(pith_cache_bytes(), 6 * MiB);
}

TEST_F(AllocatorTest, SmallBlocksAreNotCached)
{
    void *p = shim_alloc(shim_cache_min_block() - 64);
    shim_free(p, shim_cache_min_block() - 64);
    EXPECT_EQ(pith_cache_bytes(), 0u);
}

TEST_F(AllocatorTest, LimitCapsTheCache)
{
    pith_cache_set_limit(5 * MiB);
    EXPECT_EQ(pith_cache_limit(), 5 * MiB);
    void *a = shim_alloc(4 * MiB), *b = shim_alloc(4 * MiB);
    shim_free(a, 4 * MiB);
    shim_free(b, 4 * MiB); /* does not fit: returned to the system */
    EXPECT_EQ(pith_cache_bytes(), 4 * MiB);
}

TEST_F(AllocatorTest, LoweringTheLimitTrimsTheCache)
{
    void *a = shim_alloc(2 * MiB), *b = shim_alloc(2 * MiB), *c = shim_alloc(2 * MiB);
    shim_free(a, 2 * MiB);
    shim_free(b, 2 * MiB);
    shim_free(c, 2 * MiB);
    EXPECT_EQ(pith_cache_bytes(), 6 * MiB);
    pith_cache_set_limit(3 * MiB);
    EXPECT_EQ(pith_cache_bytes(), 2 * MiB);
    pith_cache_set_limit(0);
    EXPECT_EQ(pith_cache_bytes(), 0u);
}

TEST_F(AllocatorTest, ZeroLimitDisablesTheCache)
{
    pith_cache_set_limit(0);
    void *p = shim_alloc(2 * MiB);
    shim_free(p, 2 * MiB);
    EXPECT_EQ(pith_cache_bytes(), 0u);
}

TEST_F(AllocatorTest, EmptyReturnsEverything)
{
    void *a = shim_alloc(2 * MiB), *b = shim_alloc(8 * MiB);
    shim_free(a, 2 * MiB);
    shim_free(b, 8 * MiB);
    EXPECT_EQ(pith_cache_bytes(), 10 * MiB);
    pith_cache_empty();
    EXPECT_EQ(pith_cache_bytes(), 0u);
}

TEST_F(AllocatorTest, ALargeTensorOutputReusesTheBlockOfAFreedOne)
{
    int64_t n = 2 * 1024 * 1024; /* 8 MiB of float32 */
    pith_tensor *a = pith_empty(1, &n, PITH_FLOAT32);
    ASSERT_NE(a, nullptr);
    void *data = pith_data_ptr(a);
    pith_release(a);
    EXPECT_EQ(pith_cache_bytes(), 8 * MiB);
    Tensor b(pith_empty(1, &n, PITH_FLOAT32));
    EXPECT_EQ(pith_data_ptr(b.get()), data);
    EXPECT_EQ(pith_cache_bytes(), 0u);
}

TEST_F(AllocatorTest, AMidSizeOutputReusesTheBlockOfAFreedOne)
{
    /* A (4, 64, 768) float32 tensor, 768 KiB: below glibc's adaptive mmap threshold, where
     * the heap's history decided whether every output faulted its pages in again
     * (Note [Allocator cache]). */
    int64_t sizes[3] = {4, 64, 768};
    size_t nbytes = 4 * 64 * 768 * sizeof(float);
    ASSERT_GE(nbytes, shim_cache_min_block());
    pith_tensor *a = pith_empty(3, sizes, PITH_FLOAT32);
    ASSERT_NE(a, nullptr);
    void *data = pith_data_ptr(a);
    pith_release(a);
    EXPECT_EQ(pith_cache_bytes(), shim_size_class(nbytes));
    Tensor b(pith_empty(3, sizes, PITH_FLOAT32));
    EXPECT_EQ(pith_data_ptr(b.get()), data);
    EXPECT_EQ(pith_cache_bytes(), 0u);
}

TEST(AllocatorEnvTest, CacheLimitComesFromTheEnvironment)
{
    /* The variable is read once, at first use: check it in a fresh process. */
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    setenv("PITH_CACHE_LIMIT", "12345", 1);
    EXPECT_EXIT(std::exit(pith_cache_limit() == 12345 ? 0 : 1), ::testing::ExitedWithCode(0),
                "");
    setenv("PITH_CACHE_LIMIT", "3M", 1);
    EXPECT_EXIT(std::exit(pith_cache_limit() == 3 * MiB ? 0 : 1), ::testing::ExitedWithCode(0),
                "");
    setenv("PITH_CACHE_LIMIT", "lots", 1); /* unparsable: the default */
    EXPECT_EXIT(std::exit(pith_cache_limit() == 256 * MiB ? 0 : 1),
                ::testing::ExitedWithCode(0), "");
    unsetenv("PITH_CACHE_LIMIT");
}

#if defined(__SANITIZE_ADDRESS__)
TEST_F(AllocatorTest, CachedBlocksArePoisonedUnderAsan)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            char *p = static_cast<char *>(shim_alloc(2 * MiB));
            shim_free(p, 2 * MiB);
            volatile char c = p[4096];
            (void)c;
        },
        "use-after-poison");
}
#endif

TEST(CoreConcurrency, AllocatorCacheUnderManyThreads)
{
    size_t limit_before = pith_cache_limit();
    pith_cache_empty();
    pith_cache_set_limit(12 * MiB); /* small: threads also exercise the limit */
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; t++) {
        threads.emplace_back([t, &bad] {
            std::mt19937 rng(1234 + t);
            for (int i = 0; i < 100; i++) {
                size_t n = MiB + rng() % (3 * MiB);
                auto *p = static_cast<unsigned char *>(shim_alloc(n));
                if (!p) {
                    bad++;
                    continue;
                }
                p[0] = (unsigned char)t;
                p[n - 1] = (unsigned char)t;
                if (i % 10 == 0)
                    (void)pith_cache_bytes();
                if (p[0] != (unsigned char)t || p[n - 1] != (unsigned char)t)
                    bad++;
                shim_free(p, n);
            }
        });
    }
    for (auto &th : threads)
        th.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_LE(pith_cache_bytes(), 12 * MiB);
    pith_cache_empty();
    EXPECT_EQ(pith_cache_bytes(), 0u);
    pith_cache_set_limit(limit_before);
}

TEST(CoreConcurrency, TensorsCreatedAndFreedOnManyThreads)
{
    size_t live = pith_live_tensors();
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; t++) {
        threads.emplace_back([] {
            for (int i = 0; i < 200; i++) {
                int64_t n = (i % 3 == 0) ? 300000 : 1 + i;
                pith_tensor *a = pith_ones(1, &n, PITH_FLOAT32);
                pith_retain(a);
                pith_release(a);
                pith_release(a);
            }
        });
    }
    for (auto &th : threads)
        th.join();
    EXPECT_EQ(pith_live_tensors(), live);
}

} // namespace
