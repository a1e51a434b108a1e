// The counter-based generator (Philox-4x32-10) and rand, randn, randint: known answers,
// reproducibility under pith_manual_seed, independence from the thread count, thread
// safety, ranges, and loose statistical bounds (fixed seeds, so never flaky).
#include <algorithm>
#include <cmath>
#include <set>
#include <thread>

#include "views_test_util.h"

extern "C" {
#include "kernels/random.h"
}

namespace pith_e_test {
namespace {

class RandomTest : public KernelFixture {
protected:
    int threads_before_ = 0;
    void SetUp() override
    {
        KernelFixture::SetUp();
        threads_before_ = pith_get_num_threads();
    }
    void TearDown() override
    {
        pith_set_num_threads(threads_before_);
        KernelFixture::TearDown();
    }
};

std::vector<double> Sample(pith_tensor *(*make)(int, const int64_t *, pith_dtype), int64_t n,
                           pith_dtype dtype)
{
    Tensor t(make(1, &n, dtype));
    EXPECT_NE(t, nullptr) << pith_last_error();
    return t ? Values(t.get()) : std::vector<double>{};
}

/* Raw float32 bits of a large tensor (faster than pith_item_at for 1M elements). */
std::vector<float> Floats(const pith_tensor *t)
{
    const float *p = static_cast<const float *>(pith_data_ptr(t));
    return std::vector<float>(p, p + pith_numel(t));
}

// ---- Philox ----

TEST_F(RandomTest, PhiloxMatchesRandom123KnownAnswers)
{
    struct Case {
        uint32_t ctr[4], key[2], want[4];
    } cases[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
         {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
         {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (const Case &c : cases) {
        uint32_t out[4];
        philox4x32_10(c.ctr, c.key, out);
        for (int i = 0; i < 4; i++)
            EXPECT_EQ(out[i], c.want[i]) << i;
    }
}

// ---- seeding ----

TEST_F(RandomTest, SameSeedGivesSameValues)
{
    pith_manual_seed(1234);
    auto a = Sample(pith_rand, 100, PITH_FLOAT32);
    auto b = Sample(pith_randn, 100, PITH_FLOAT64);
    pith_manual_seed(1234);
    EXPECT_EQ(Sample(pith_rand, 100, PITH_FLOAT32), a);
    EXPECT_EQ(Sample(pith_randn, 100, PITH_FLOAT64), b);
}

TEST_F(RandomTest, SuccessiveCallsDiffer)
{
    pith_manual_seed(7);
    auto a = Sample(pith_rand, 64, PITH_FLOAT64);
    auto b = Sample(pith_rand, 64, PITH_FLOAT64);
    EXPECT_NE(a, b);
    std::set<double> all(a.begin(), a.end());
    all.insert(b.begin(), b.end());
    EXPECT_EQ(all.size(), 128u); // 53-bit values: no repeats across the two calls
}

TEST_F(RandomTest, DifferentSeedsDiffer)
{
    pith_manual_seed(1);
    auto a = Sample(pith_rand, 16, PITH_FLOAT32);
    pith_manual_seed(2);
    EXPECT_NE(Sample(pith_rand, 16, PITH_FLOAT32), a);
}

TEST_F(RandomTest, ResultsDoNotDependOnTheThreadCount)
{
    const int64_t n = 1 << 20; // far above the grain size
    std::vector<float> one, two;
    for (int threads : {1, 2}) {
        pith_set_num_threads(threads);
        pith_manual_seed(99);
        Tensor u(pith_rand(1, &n, PITH_FLOAT32));
        Tensor z(pith_randn(1, &n, PITH_FLOAT32));
        ASSERT_TRUE(u && z) << pith_last_error();
        std::vector<float> both = Floats(u.get());
        std::vector<float> normal = Floats(z.get());
        both.insert(both.end(), normal.begin(), normal.end());
        (threads == 1 ? one : two) = both;
    }
    EXPECT_TRUE(one == two);
}

TEST_F(RandomTest, ConcurrentCallsNeverShareNumbers)
{
    // Each call reserves its own counter blocks, so the calls of 4 threads together use
    // exactly the blocks that the same number of serial calls would.
    const int calls = 400;
    pith_manual_seed(5);
    std::multiset<double> serial;
    for (int i = 0; i < calls; i++)
        for (double v : Sample(pith_rand, 4, PITH_FLOAT64))
            serial.insert(v);
    pith_manual_seed(5);
    std::vector<std::vector<double>> per_thread(4);
    std::vector<std::thread> workers;
    for (int w = 0; w < 4; w++)
        workers.emplace_back([w, &per_thread] {
            const int64_t four = 4;
            for (int i = 0; i < calls / 4; i++) {
                pith_tensor *t = pith_rand(1, &four, PITH_FLOAT64);
                const double *p = static_cast<const double *>(pith_data_ptr(t));
                per_thread[w].insert(per_thread[w].end(), p, p + 4);
                pith_release(t);
            }
        });
    for (auto &t : workers)
        t.join();
    std::multiset<double> threaded;
    for (auto &v : per_thread)
        threaded.insert(v.begin(), v.end());
    EXPECT_TRUE(serial == threaded);
    EXPECT_EQ(std::set<double>(serial.begin(), serial.end()).size(), serial.size());
}

TEST_F(RandomTest, MetaTensorsDoNotAdvanceTheGenerator)
{
    pith_manual_seed(3);
    auto want = Sample(pith_rand, 8, PITH_FLOAT32);
    pith_manual_seed(3);
    const pith_op *op = pith_op_find("rand");
    pith_stack *s = pith_stack_new();
    const int64_t size = 1000;
    pith_stack_push_int_list(s, &size, 1);
    pith_stack_push_none(s); /* generator */
    pith_stack_push_none(s); /* dtype */
    pith_stack_push_device(s, PITH_META);
    ASSERT_EQ(pith_call_boxed(op, s), PITH_OK) << pith_last_error();
    Tensor meta(pith_stack_get_tensor(s, pith_stack_size(s) - 1));
    pith_stack_free(s);
    EXPECT_EQ(pith_tensor_device(meta.get()), PITH_META);
    EXPECT_EQ(Sample(pith_rand, 8, PITH_FLOAT32), want);
}

// ---- rand ----

TEST_F(RandomTest, RandIsInZeroOneForEveryFloatingDtype)
{
    pith_manual_seed(11);
    for (pith_dtype d : {PITH_FLOAT16, PITH_BFLOAT16, PITH_FLOAT32, PITH_FLOAT64}) {
        auto v = Sample(pith_rand, 20000, d);
        ASSERT_EQ(v.size(), 20000u);
        EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0) << pith_dtype_name(d);
        EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0) << pith_dtype_name(d);
        EXPECT_GT(std::set<double>(v.begin(), v.end()).size(), 200u) << pith_dtype_name(d);
    }
}

TEST_F(RandomTest, RandMeanAndVarianceAreUniforms)
{
    // 1M uniforms: mean 1/2 (sd of the mean sqrt(1/12/n) = 2.9e-4), variance 1/12 (sd of
    // the sample variance sqrt(1/180/n) = 7.5e-5). Bounds at 6 standard deviations.
    pith_manual_seed(2024);
    const int64_t n = 1 << 20;
    Tensor u(pith_rand(1, &n, PITH_FLOAT32));
    ASSERT_NE(u, nullptr);
    double sum = 0, sq = 0;
    for (float x : Floats(u.get())) {
        sum += x;
        sq += (double)x * x;
    }
    double mean = sum / n, var = sq / n - mean * mean;
    EXPECT_NEAR(mean, 0.5, 6 * std::sqrt(1.0 / 12 / n));
    EXPECT_NEAR(var, 1.0 / 12, 6 * std::sqrt(1.0 / 180 / n));
}

TEST_F(RandomTest, RandOfNonFloatingDtypeIsATypeError)
{
    const int64_t n = 3;
    EXPECT_EQ(pith_rand(1, &n, PITH_INT64), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "rand: expected a floating point dtype, got int64"));
    EXPECT_EQ(pith_randn(1, &n, PITH_BOOL), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "randn: expected a floating point dtype, got bool"));
}

TEST_F(RandomTest, RandDefaultsToFloat32AndTakesAnyShape)
{
    const int64_t sizes[] = {2, 0, 3};
    Tensor e(pith_rand(3, sizes, (pith_dtype)-1));
    Tensor s(pith_rand(0, nullptr, (pith_dtype)-1));
    ASSERT_TRUE(e && s) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(e.get()), PITH_FLOAT32);
    EXPECT_EQ(Sizes(e.get()), (Shape{2, 0, 3}));
    EXPECT_EQ(pith_ndim(s.get()), 0);
    const int64_t neg = -1;
    EXPECT_EQ(pith_rand(1, &neg, (pith_dtype)-1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative"));
}

// ---- randn ----

TEST_F(RandomTest, RandnHasMeanZeroAndUnitVariance)
{
    // 1M standard normals: sd of the mean 1/sqrt(n) = 9.8e-4, sd of the sample variance
    // sqrt(2/n) = 1.4e-3; bounds at 6 standard deviations. Odd tail moments stay sane.
    pith_manual_seed(31337);
    const int64_t n = 1 << 20;
    Tensor z(pith_randn(1, &n, PITH_FLOAT32));
    ASSERT_NE(z, nullptr);
    double sum = 0, sq = 0;
    int64_t beyond_three = 0;
    for (float x : Floats(z.get())) {
        ASSERT_TRUE(std::isfinite(x));
        sum += x;
        sq += (double)x * x;
        beyond_three += std::fabs(x) > 3;
    }
    double mean = sum / n, var = sq / n - mean * mean;
    EXPECT_NEAR(mean, 0.0, 6 / std::sqrt((double)n));
    EXPECT_NEAR(var, 1.0, 6 * std::sqrt(2.0 / n));
    // P(|z| > 3) = 0.0027: expect 2831 of 1M, sd 53
    EXPECT_NEAR((double)beyond_three, 0.0027 * n, 6 * std::sqrt(0.0027 * n));
}

TEST_F(RandomTest, RandnFloat64IsFinite)
{
    pith_manual_seed(8);
    auto v = Sample(pith_randn, 10001, PITH_FLOAT64);
    for (double x : v)
        ASSERT_TRUE(std::isfinite(x));
    EXPECT_EQ(std::set<double>(v.begin(), v.end()).size(), v.size());
}

// ---- randint ----

TEST_F(RandomTest, RandintStaysInRangeAndHitsEveryValue)
{
    pith_manual_seed(17);
    const int64_t n = 10000;
    Tensor t(pith_randint(-3, 4, 1, &n, (pith_dtype)-1));
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(t.get()), PITH_INT64);
    auto v = Values(t.get());
    EXPECT_EQ(*std::min_element(v.begin(), v.end()), -3);
    EXPECT_EQ(*std::max_element(v.begin(), v.end()), 3);
    EXPECT_EQ(std::set<double>(v.begin(), v.end()).size(), 7u);
}

TEST_F(RandomTest, RandintWithAWideRange)
{
    pith_manual_seed(4);
    const int64_t n = 1000;
    Tensor t(pith_randint(INT64_MIN, INT64_MAX, 1, &n, (pith_dtype)-1));
    ASSERT_NE(t, nullptr) << pith_last_error();
    const int64_t *p = static_cast<const int64_t *>(pith_data_ptr(t.get()));
    int64_t negative = std::count_if(p, p + n, [](int64_t x) { return x < 0; });
    EXPECT_GT(negative, 400);
    EXPECT_LT(negative, 600);
    EXPECT_EQ(*std::max_element(p, p + n) < INT64_MAX, true);
}

TEST_F(RandomTest, RandintIntoOtherDtypes)
{
    pith_manual_seed(6);
    const int64_t n = 500;
    Tensor f(pith_randint(0, 10, 1, &n, PITH_FLOAT32));
    Tensor b(pith_randint(0, 2, 1, &n, PITH_BOOL));
    Tensor u(pith_randint(250, 256, 1, &n, PITH_UINT8));
    ASSERT_TRUE(f && b && u) << pith_last_error();
    for (double x : Values(f.get()))
        ASSERT_TRUE(x == std::floor(x) && x >= 0 && x < 10) << x;
    auto bv = Values(b.get());
    EXPECT_EQ(std::set<double>(bv.begin(), bv.end()), (std::set<double>{0, 1}));
    for (double x : Values(u.get()))
        ASSERT_TRUE(x >= 250 && x <= 255) << x;
}

TEST_F(RandomTest, RandintErrors)
{
    const int64_t n = 2;
    EXPECT_EQ(pith_randint(5, 5, 1, &n, (pith_dtype)-1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"));
    EXPECT_EQ(pith_randint(0, 300, 1, &n, PITH_UINT8), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "to - 1 is out of bounds for uint8"));
    EXPECT_EQ(pith_randint(-1, 5, 1, &n, PITH_UINT8), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "from is out of bounds for uint8"));
    EXPECT_EQ(pith_randint(0, 5, -1, &n, (pith_dtype)-1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "ndim -1 is out of range"));
}

// ---- generators and randperm ----

/* rand through the boxed call with an explicit generator (NULL: None). */
std::vector<double> RandWith(pith_generator *g, int64_t n)
{
    const pith_op *op = pith_op_find("rand");
    pith_stack *s = pith_stack_new();
    pith_stack_push_int_list(s, &n, 1);
    if (g)
        pith_stack_push_generator(s, g);
    else
        pith_stack_push_none(s);
    EXPECT_EQ(pith_call_boxed(op, s), PITH_OK) << pith_last_error();
    Tensor t(pith_stack_get_tensor(s, pith_stack_size(s) - 1));
    pith_stack_free(s);
    return t ? Values(t.get()) : std::vector<double>{};
}

TEST_F(RandomTest, AGeneratorIsItsOwnStream)
{
    pith_generator *g = pith_generator_new(11);
    ASSERT_NE(g, nullptr);
    pith_manual_seed(11);
    auto from_default = RandWith(nullptr, 6);
    auto from_g = RandWith(g, 6);
    EXPECT_EQ(from_g, from_default); // the same seed gives the same stream
    pith_manual_seed(11);
    auto a = RandWith(g, 6); // g moved on; the default one restarted
    EXPECT_NE(a, from_default);
    EXPECT_EQ(RandWith(nullptr, 6), from_default);
    pith_generator_release(g);
}

TEST_F(RandomTest, GeneratorStateRoundTrips)
{
    pith_generator *g = pith_generator_new(5);
    RandWith(g, 10);
    uint64_t seed, offset;
    pith_generator_get_state(g, &seed, &offset);
    EXPECT_EQ(seed, 5u);
    EXPECT_GT(offset, 0u);
    auto next = RandWith(g, 10);
    pith_generator_set_state(g, seed, offset);
    EXPECT_EQ(RandWith(g, 10), next);
    EXPECT_EQ(pith_generator_initial_seed(g), 5u);
    uint64_t fresh = pith_generator_seed(g);
    EXPECT_EQ(pith_generator_initial_seed(g), fresh);
    pith_generator_release(g);
    pith_generator_retain(nullptr); // ignored
    pith_generator_release(nullptr);
    pith_generator_release(pith_default_generator()); // the static one is never freed
    EXPECT_NE(pith_default_generator(), nullptr);
}

Tensor Randperm(int64_t n, int dtype, pith_generator *g = nullptr)
{
    pith_stack *s = pith_stack_new();
    pith_stack_push_int(s, n);
    pith_stack_push_generator(s, g); // NULL: the default generator
    if (dtype < 0)
        pith_stack_push_none(s);
    else
        pith_stack_push_dtype(s, (pith_dtype)dtype);
    pith_tensor *t = nullptr;
    if (pith_call_boxed(pith_op_find("randperm"), s) == PITH_OK)
        t = pith_stack_get_tensor(s, pith_stack_size(s) - 1);
    pith_stack_free(s);
    return Tensor(t);
}

TEST_F(RandomTest, RandpermIsAPermutation)
{
    pith_manual_seed(2);
    for (int64_t n : {0, 1, 2, 7, 1000}) {
        Tensor t = Randperm(n, -1);
        ASSERT_NE(t, nullptr) << pith_last_error();
        EXPECT_EQ(pith_tensor_dtype(t.get()), PITH_INT64);
        auto v = Values(t.get());
        std::sort(v.begin(), v.end());
        for (int64_t i = 0; i < n; i++)
            ASSERT_EQ(v[(size_t)i], (double)i);
    }
    Tensor f = Randperm(5, PITH_FLOAT32);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(pith_tensor_dtype(f.get()), PITH_FLOAT32);
}

TEST_F(RandomTest, RandpermIsReproducibleAndMixes)
{
    pith_generator *g = pith_generator_new(9);
    auto a = Values(Randperm(50, -1, g).get());
    pith_generator_manual_seed(g, 9);
    EXPECT_EQ(Values(Randperm(50, -1, g).get()), a);
    EXPECT_NE(Values(Randperm(50, -1, g).get()), a);
    // Every position takes many values over many draws (no fixed points by construction).
    std::vector<std::set<double>> seen(10);
    for (int k = 0; k < 200; k++) {
        auto p = Values(Randperm(10, -1, g).get());
        for (size_t i = 0; i < 10; i++)
            seen[i].insert(p[i]);
    }
    for (const auto &s : seen)
        EXPECT_EQ(s.size(), 10u);
    pith_generator_release(g);
}

TEST_F(RandomTest, RandpermErrors)
{
    EXPECT_EQ(Randperm(-1, -1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "n must be non-negative"));
    EXPECT_EQ(Randperm(300, PITH_UINT8), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "n is too large for result tensor type"));
    EXPECT_NE(Randperm(256, PITH_UINT8), nullptr);
}

} // namespace
} // namespace pith_e_test
