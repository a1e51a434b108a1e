// vecmath_test.cc — the vectorised math functions (See Note [Vectorised math functions],
// kernels/vecmath.h): the choice of instruction set, the error bounds of every function on
// every table the CPU can run (special values, denormals and random inputs; every float32
// input is scripts/check_vecmath_ulp.c's job), identical bits wherever an array is cut, the
// row kernels of softmax and layer_norm against a scalar model of their summation order, and
// the elementwise ops built on them (float16/bfloat16 through float32, strides, threads, pow
// by a Python scalar).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/pith_test.h"
#include "kernels/vecmath.h"
#include "kernels/generated/vecmath_functions.h"
#include "pith/pith.h"
#include "vecmath_reference.h"

extern "C" pith_tensor *shim_wrapped_number(double value);

namespace {

using pith_test::Tensor;

struct Function {
    const char *name;
    vecmath_f32 vecmath_table::*f32;
    vecmath_f64 vecmath_table::*f64;
    double (*ref)(double);
    long double (*refl)(long double);
    double bound_f32, bound_f64;
};

#define FUNCTION_ROW(n, b32, b64)                                                           \
    Function{#n, &vecmath_table::n##_f32, &vecmath_table::n##_f64, ref_##n, refl_##n, b32, b64},
const Function kFunctions[] = {VECMATH_FORALL_UNARY_BOUNDS(FUNCTION_ROW)};

// The capabilities this CPU can run: every table is tested on it.
std::vector<vecmath_capability> RunnableCapabilities()
{
    std::vector<vecmath_capability> out;
    for (int c = 0; c <= (int)vecmath_supported(); c++)
        out.push_back((vecmath_capability)c);
    return out;
}

template <typename T, typename U> T Bits(U v)
{
    T t;
    std::memcpy(&t, &v, sizeof t);
    return t;
}

// Special values, the boundaries the kernels branch on, denormals, and random values over
// every exponent and densely around 0.
std::vector<float> FloatInputs()
{
    std::vector<float> x = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f, 0.5f,
                            FLT_MIN, -FLT_MIN, FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MAX, -FLT_MAX,
                            0.625f, 0.84375f, 3.0f, -3.0f, 13.0f, -13.0f, 80.0f, -80.0f, 88.72f,
                            89.0f, -103.9f, -104.0f, -120.0f, 1e6f, -1e6f, 1.0000001e6f,
                            0x1p23f, 0x1p24f, -14.2f, -14.5f, -20.0f, 1e-30f, -1e-30f,
                            1e-40f, -1e-40f};
    std::mt19937_64 rng(12345);
    std::uniform_int_distribution<uint32_t> bits;
    std::uniform_real_distribution<float> near(-20.0f, 20.0f);
    for (int i = 0; i < 60000; i++)
        x.push_back(Bits<float>(bits(rng)));
    for (int i = 0; i < 60000; i++)
        x.push_back(near(rng));
    for (int e = -149; e < 128; e++)
        for (int i = 0; i < 8; i++)
            x.push_back(std::ldexp((i & 1 ? -1.0f : 1.0f) * (1.0f + (float)i / 8), e));
    return x;
}

std::vector<double> DoubleInputs()
{
    std::vector<double> x = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5, DBL_MIN,
                             -DBL_MIN, DBL_TRUE_MIN, -DBL_TRUE_MIN, DBL_MAX, -DBL_MAX, 0.625,
                             0.84375, 0.6745, 3.0, 27.3, -37.0, -38.5, -40.0, 700.0, -700.0,
                             709.78, 710.0, -745.0, -800.0, 1e6, -1e6, 1e300, 1e-300, 1e-310};
    std::mt19937_64 rng(6789);
    std::uniform_int_distribution<uint64_t> bits;
    std::uniform_real_distribution<double> near(-40.0, 40.0);
    for (int i = 0; i < 30000; i++)
        x.push_back(Bits<double>(bits(rng)));
    for (int i = 0; i < 30000; i++)
        x.push_back(near(rng));
    for (int e = -1074; e < 1024; e += 3)
        x.push_back(std::ldexp((e & 1 ? -1.0 : 1.0) * 1.37, e));
    return x;
}

// Selects a table for one test and restores the one in use afterwards.
class WithCapability {
public:
    explicit WithCapability(vecmath_capability c) : saved_(Current()) { vecmath_select(c); }
    ~WithCapability() { vecmath_select(saved_); }

private:
    static vecmath_capability Current()
    {
        std::string name = vecmath_active()->name;
        for (int c = 0; c < VECMATH_NUM_CAPABILITIES; c++)
            if (name == vecmath_capability_name((vecmath_capability)c))
                return (vecmath_capability)c;
        return VECMATH_SSE2;
    }
    vecmath_capability saved_;
};

// ---- the choice of instruction set (Note [CPU capability]) ----

TEST(VecmathDispatch, NoRequestPicksTheBestTheCpuSupports)
{
    char message[160];
    EXPECT_EQ(vecmath_resolve(nullptr, VECMATH_AVX2, message, sizeof message), VECMATH_AVX2);
    EXPECT_STREQ(message, "");
    EXPECT_EQ(vecmath_resolve("", VECMATH_AVX512, message, sizeof message), VECMATH_AVX512);
    EXPECT_STREQ(message, "");
}

TEST(VecmathDispatch, ARequestWithinTheCpuIsHonoured)
{
    char message[160];
    EXPECT_EQ(vecmath_resolve("sse2", VECMATH_AVX512, message, sizeof message), VECMATH_SSE2);
    EXPECT_STREQ(message, "");
    EXPECT_EQ(vecmath_resolve("default", VECMATH_AVX512, message, sizeof message),
              VECMATH_SSE2);
    EXPECT_EQ(vecmath_resolve("AVX2", VECMATH_AVX512, message, sizeof message), VECMATH_AVX2);
    EXPECT_EQ(vecmath_resolve("avx512", VECMATH_AVX512, message, sizeof message),
              VECMATH_AVX512);
    EXPECT_STREQ(message, "");
}

TEST(VecmathDispatch, ARequestBeyondTheCpuIsClampedWithAMessage)
{
    char message[160];
    EXPECT_EQ(vecmath_resolve("avx512", VECMATH_AVX2, message, sizeof message), VECMATH_AVX2);
    EXPECT_NE(std::string(message).find("supports avx2 at most; using avx2"), std::string::npos)
        << message;
    EXPECT_EQ(vecmath_resolve("avx2", VECMATH_SSE2, message, sizeof message), VECMATH_SSE2);
    EXPECT_NE(std::string(message).find("using sse2"), std::string::npos) << message;
}

TEST(VecmathDispatch, AnUnknownRequestIsIgnoredWithAMessage)
{
    char message[160];
    EXPECT_EQ(vecmath_resolve("neon", VECMATH_AVX2, message, sizeof message), VECMATH_AVX2);
    EXPECT_NE(std::string(message).find("PITH_CPU_CAPABILITY=neon is not one of"),
              std::string::npos)
        << message;
}

TEST(VecmathDispatch, SelectingIsClampedToTheCpuAndReported)
{
    WithCapability restore(VECMATH_SSE2);
    EXPECT_STREQ(pith_get_cpu_capability(), "sse2");
    vecmath_capability got = vecmath_select(VECMATH_AVX512);
    EXPECT_LE(got, vecmath_supported());
    EXPECT_EQ(got, vecmath_supported());
    EXPECT_STREQ(pith_get_cpu_capability(), vecmath_capability_name(got));
    EXPECT_STREQ(vecmath_active()->name, vecmath_capability_name(got));
}

// ---- accuracy: every function, every table the CPU runs ----

class VecmathAccuracy
    : public ::testing::TestWithParam<std::tuple<vecmath_capability, Function>> {};

std::string AccuracyName(const ::testing::TestParamInfo<VecmathAccuracy::ParamType> &info)
{
    return std::string(vecmath_capability_name(std::get<0>(info.param))) + "_" +
           std::get<1>(info.param).name;
}

TEST_P(VecmathAccuracy, Float32IsWithinItsBoundAgainstFloat64)
{
    const auto &[capability, fn] = GetParam();
    const vecmath_table *table = vecmath_table_of(capability);
    std::vector<float> x = FloatInputs(), out(x.size());
    (table->*fn.f32)(out.data(), x.data(), (int64_t)x.size());
    double worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < x.size(); i++) {
        double e = ulp_error_f32(out[i], fn.ref((double)x[i]));
        if (!(e <= worst)) {
            worst = e;
            worst_x = x[i];
        }
    }
    EXPECT_LE(worst, fn.bound_f32) << fn.name << " float32 on " << table->name << " at x = "
                                   << worst_x;
}

TEST_P(VecmathAccuracy, Float64IsWithinItsBoundAgainstLongDouble)
{
    const auto &[capability, fn] = GetParam();
    const vecmath_table *table = vecmath_table_of(capability);
    std::vector<double> x = DoubleInputs(), out(x.size());
    (table->*fn.f64)(out.data(), x.data(), (int64_t)x.size());
    double worst = 0, worst_x = 0;
    for (size_t i = 0; i < x.size(); i++) {
        double e = ulp_error_f64(out[i], fn.refl((long double)x[i]));
        if (!(e <= worst)) {
            worst = e;
            worst_x = x[i];
        }
    }
    EXPECT_LE(worst, fn.bound_f64) << fn.name << " float64 on " << table->name << " at x = "
                                   << worst_x;
}

// Lanes whose result is tiny or special must not take their neighbours' path: one such lane
// among ordinary ones (See Note [Wide range on demand], Note [GELU by table]) changes none
// of the others' bits.
TEST_P(VecmathAccuracy, AWideLaneDoesNotChangeItsNeighbours)
{
    const auto &[capability, fn] = GetParam();
    const vecmath_table *table = vecmath_table_of(capability);
    std::mt19937_64 rng(99);
    // near: every piece of gelu's table (Note [GELU by table]); 3.25 and -4 are just past it
    std::uniform_real_distribution<float> near(-3.0f, 3.0f);
    const float wide[] = {-100.0f, -13.5f, 90.0f, INFINITY, -INFINITY, NAN, -1e6f, 2e6f,
                          3.25f,   -4.0f};
    std::vector<float> x(64);
    for (float &v : x)
        v = near(rng);
    std::vector<float> alone(x.size()), mixed(x.size());
    (table->*fn.f32)(alone.data(), x.data(), (int64_t)x.size());
    for (float w : wide) {
        std::vector<float> y = x;
        for (size_t i = 0; i < y.size(); i += 7)
            y[i] = w;
        (table->*fn.f32)(mixed.data(), y.data(), (int64_t)y.size());
        for (size_t i = 0; i < y.size(); i++) {
            if (i % 7 == 0)
                continue;
            ASSERT_EQ(Bits<uint32_t>(mixed[i]), Bits<uint32_t>(alone[i]))
                << fn.name << " on " << table->name << " at x = " << x[i] << " beside " << w;
        }
    }
}

// The body (whole vectors) and the tail (a padded vector) give the same bits: cutting an
// array anywhere, or computing one element at a time, changes nothing.
TEST_P(VecmathAccuracy, WhereTheArrayIsCutChangesNoBits)
{
    const auto &[capability, fn] = GetParam();
    const vecmath_table *table = vecmath_table_of(capability);
    std::vector<float> x = FloatInputs();
    x.resize(16 * 5 + 7);
    std::vector<double> xd(x.begin(), x.end());
    std::vector<float> whole(x.size()), cut(x.size());
    std::vector<double> whole_d(x.size()), cut_d(x.size());
    const int64_t n = (int64_t)x.size();
    (table->*fn.f32)(whole.data(), x.data(), n);
    (table->*fn.f64)(whole_d.data(), xd.data(), n);
    for (int64_t k = 0; k <= n; k++) {
        (table->*fn.f32)(cut.data(), x.data(), k);
        (table->*fn.f32)(cut.data() + k, x.data() + k, n - k);
        (table->*fn.f64)(cut_d.data(), xd.data(), k);
        (table->*fn.f64)(cut_d.data() + k, xd.data() + k, n - k);
        for (int64_t i = 0; i < n; i++) {
            ASSERT_EQ(Bits<uint32_t>(cut[i]), Bits<uint32_t>(whole[i]))
                << fn.name << " float32 on " << table->name << ", cut at " << k << ", x = "
                << x[i];
            ASSERT_EQ(Bits<uint64_t>(cut_d[i]), Bits<uint64_t>(whole_d[i]))
                << fn.name << " float64 on " << table->name << ", cut at " << k;
        }
    }
    for (int64_t i = 0; i < n; i++) { /* in place, one at a time */
        float one = x[i];
        (table->*fn.f32)(&one, &one, 1);
        ASSERT_EQ(Bits<uint32_t>(one), Bits<uint32_t>(whole[i])) << fn.name << " x = " << x[i];
    }
}

INSTANTIATE_TEST_SUITE_P(Tables, VecmathAccuracy,
                         ::testing::Combine(::testing::ValuesIn(RunnableCapabilities()),
                                            ::testing::ValuesIn(kFunctions)),
                         AccuracyName);

// AVX2 and AVX-512 fuse the same multiply-adds, so they agree bit for bit.
TEST(VecmathTables, Avx2AndAvx512GiveTheSameBits)
{
    if (vecmath_supported() < VECMATH_AVX512)
        GTEST_SKIP() << "this CPU has no AVX-512";
    std::vector<float> x = FloatInputs(), a(x.size()), b(x.size());
    for (const Function &fn : kFunctions) {
        (vecmath_table_of(VECMATH_AVX2)->*fn.f32)(a.data(), x.data(), (int64_t)x.size());
        (vecmath_table_of(VECMATH_AVX512)->*fn.f32)(b.data(), x.data(), (int64_t)x.size());
        for (size_t i = 0; i < x.size(); i++) {
            if (std::isnan(a[i]) && std::isnan(b[i]))
                continue;
            ASSERT_EQ(Bits<uint32_t>(a[i]), Bits<uint32_t>(b[i])) << fn.name << " x = " << x[i];
        }
    }
}

// ---- pow ----

class VecmathPow : public ::testing::TestWithParam<vecmath_capability> {};

std::vector<std::pair<float, float>> PowPairs()
{
    const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.5f, -0.5f, 3.0f, -3.0f,
                             2.5f, -2.5f, INFINITY, -INFINITY, NAN, FLT_TRUE_MIN, FLT_MAX,
                             1e-40f, -1e-40f, 0x1p24f, 0x1p24f + 2, 0x1p23f + 1, -(0x1p23f + 1),
                             100.0f, -151.0f};
    std::vector<std::pair<float, float>> out;
    for (float x : special)
        for (float y : special)
            out.emplace_back(x, y);
    std::mt19937_64 rng(4242);
    std::uniform_real_distribution<float> base(-30.0f, 30.0f), exponent(-12.0f, 12.0f);
    for (int i = 0; i < 100000; i++) {
        float y = exponent(rng);
        out.emplace_back(base(rng), i % 5 == 0 ? std::round(y) : y);
    }
    return out;
}

TEST_P(VecmathPow, Float32IsWithinItsBoundAndFollowsCsRules)
{
    const vecmath_table *table = vecmath_table_of(GetParam());
    auto pairs = PowPairs();
    std::vector<float> x, y, out(pairs.size());
    for (auto &[a, b] : pairs) {
        x.push_back(a);
        y.push_back(b);
    }
    table->pow_f32(out.data(), x.data(), y.data(), 1, (int64_t)x.size());
    for (size_t i = 0; i < x.size(); i++)
        ASSERT_LE(ulp_error_f32(out[i], std::pow((double)x[i], (double)y[i])),
                  VECMATH_POW_BOUND_F32)
            << "pow(" << x[i] << ", " << y[i] << ") = " << out[i] << " on " << table->name;
}

TEST_P(VecmathPow, Float64IsWithinItsBoundAndFollowsCsRules)
{
    const vecmath_table *table = vecmath_table_of(GetParam());
    auto pairs = PowPairs();
    std::vector<double> x, y, out(pairs.size());
    std::mt19937_64 rng(77);
    std::uniform_real_distribution<double> near1(-1e-6, 1e-6), big(0, 400);
    for (auto &[a, b] : pairs) {
        x.push_back(a);
        y.push_back(b);
    }
    for (int i = 0; i < 20000; i++) { // near 1 with large exponents: log's accuracy matters
        x.push_back(1 + near1(rng));
        y.push_back(big(rng) * 1e4);
    }
    out.resize(x.size());
    table->pow_f64(out.data(), x.data(), y.data(), 1, (int64_t)x.size());
    for (size_t i = 0; i < x.size(); i++)
        ASSERT_LE(ulp_error_f64(out[i], powl((long double)x[i], (long double)y[i])),
                  VECMATH_POW_BOUND_F64)
            << "pow(" << x[i] << ", " << y[i] << ") = " << out[i] << " on " << table->name;
}

TEST_P(VecmathPow, OneExponentForAllGivesTheBitsOfAnArrayOfIt)
{
    const vecmath_table *table = vecmath_table_of(GetParam());
    std::vector<float> x = FloatInputs();
    x.resize(1001);
    for (float c : {2.5f, -0.75f, 3.0f, 1.0f / 3.0f}) {
        std::vector<float> ys(x.size(), c), a(x.size()), b(x.size());
        table->pow_f32(a.data(), x.data(), &c, 0, (int64_t)x.size());
        table->pow_f32(b.data(), x.data(), ys.data(), 1, (int64_t)x.size());
        for (size_t i = 0; i < x.size(); i++)
            ASSERT_EQ(Bits<uint32_t>(a[i]), Bits<uint32_t>(b[i])) << x[i] << " ** " << c;
        for (int64_t k : {1, 7, 16, 500}) { // and cut anywhere
            table->pow_f32(b.data(), x.data(), ys.data(), 1, k);
            table->pow_f32(b.data() + k, x.data() + k, ys.data() + k, 1, (int64_t)x.size() - k);
            for (size_t i = 0; i < x.size(); i++)
                ASSERT_EQ(Bits<uint32_t>(a[i]), Bits<uint32_t>(b[i])) << x[i] << " ** " << c;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Tables, VecmathPow, ::testing::ValuesIn(RunnableCapabilities()),
                         [](const auto &info) {
                             return std::string(vecmath_capability_name(info.param));
                         });

// ---- the row kernels of softmax and layer_norm (See Note [Row sums in a fixed order]) ----

// A scalar model of the order the Note fixes: element j into partial j % lanes, the partials
// folded by halves.
template <typename T> struct RowSum {
    std::vector<T> p;
    explicit RowSum(int lanes) : p(lanes, T(0)) {}
    void add(size_t j, T v) { p[j % p.size()] = p[j % p.size()] + v; }
    T fold() const
    {
        std::vector<T> b = p;
        for (size_t h = b.size() / 2; h >= 1; h /= 2)
            for (size_t i = 0; i < h; i++)
                b[i] = b[i] + b[i + h];
        return b[0];
    }
};

template <typename T> std::vector<T> RandomRow(size_t n, uint64_t seed, T scale)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> d(0.0, 1.0);
    std::vector<T> x(n);
    for (T &v : x)
        v = (T)(d(rng) * (double)scale) + (T)0.25;
    return x;
}

const size_t kRowLengths[] = {1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 256, 1000, 4099};

// The model of the softmax row, with the table's own exp on each element (its bits do not
// depend on where an array is cut: WhereTheArrayIsCutChangesNoBits).
template <typename T>
std::vector<T> SoftmaxModel(void (*exp_fn)(T *, const T *, int64_t), const std::vector<T> &x,
                            bool as_log, int lanes)
{
    T max = -INFINITY;
    bool nan = false;
    for (T v : x) {
        max = v > max ? v : max;
        nan |= v != v;
    }
    if (nan)
        max = (T)NAN;
    std::vector<T> e(x.size()), y(x.size());
    RowSum<T> sum(lanes);
    for (size_t j = 0; j < x.size(); j++) {
        T d = x[j] - max;
        exp_fn(&e[j], &d, 1);
        sum.add(j, e[j]);
    }
    T s = sum.fold();
    T log_sum = (T)std::log(s), inv = (T)1 / s;
    for (size_t j = 0; j < x.size(); j++)
        y[j] = as_log ? (x[j] - max) - log_sum : e[j] * inv;
    return y;
}

template <typename T>
std::vector<T> LayerNormModel(const std::vector<T> &x, const T *w, const T *b, double eps,
                              int lanes)
{
    RowSum<T> s1(lanes), s2(lanes);
    for (size_t j = 0; j < x.size(); j++) /* the mean about x[0] */
        s1.add(j, x[j] - x[0]);
    T mean = x[0] + s1.fold() / (T)x.size();
    for (size_t j = 0; j < x.size(); j++)
        s2.add(j, (x[j] - mean) * (x[j] - mean));
    T rstd = (T)(1.0 / std::sqrt((double)s2.fold() / (double)x.size() + eps));
    std::vector<T> y(x.size());
    for (size_t j = 0; j < x.size(); j++) {
        T a = (x[j] - mean) * rstd;
        if (w)
            a = a * w[j];
        if (b)
            a = a + b[j];
        y[j] = a;
    }
    return y;
}

template <typename T, typename B> void ExpectSameBits(const std::vector<T> &got,
                                                      const std::vector<T> &want,
                                                      const std::string &what)
{
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < got.size(); j++)
        ASSERT_EQ(Bits<B>(got[j]), Bits<B>(want[j]))
            << what << ", len " << got.size() << ", element " << j << ": " << got[j]
            << " != " << want[j];
}

class VecmathRows : public ::testing::TestWithParam<vecmath_capability> {};

TEST_P(VecmathRows, SoftmaxSumsInTheFixedOrder)
{
    const vecmath_table *table = vecmath_table_of(GetParam());
    for (size_t n : kRowLengths)
        for (int as_log = 0; as_log <= 1; as_log++) {
            std::string what = std::string(table->name) + (as_log ? " log_softmax" : " softmax");
            std::vector<float> x = RandomRow<float>(n, n, 3.0f), y(n);
            table->softmax_row_f32(y.data(), x.data(), (int64_t)n, as_log);
            ExpectSameBits<float, uint32_t>(
                y, SoftmaxModel<float>(table->exp_f32, x, as_log, VECMATH_ROW_LANES_F32),
                what + " float32");
            std::vector<double> xd = RandomRow<double>(n, n + 1, 3.0), yd(n);
            table->softmax_row_f64(yd.data(), xd.data(), (int64_t)n, as_log);
            ExpectSameBits<double, uint64_t>(
                yd,
                SoftmaxModel<double>(table->exp_f64, xd, as_log, VECMATH_ROW_LANES_F64),
                what + " float64");
            // in place
            table->softmax_row_f32(x.data(), x.data(), (int64_t)n, as_log);
            ExpectSameBits<float, uint32_t>(x, y, what + " float32 in place");
        }
}

TEST_P(VecmathRows, SoftmaxOfARowWithANanOrOnlyMinusInfinityIsNan)
{
    const vecmath_table *table = vecmath_table_of(GetParam());
    for (size_t n : {1, 5, 16, 40}) {
        std::vector<float> x = RandomRow<float>(n, 7, 1.0f), y(n);
        x[n / 2] = NAN;
        for (int as_log = 0; as_log <= 1; as_log++) {
            table->softmax_row_f32(y.data(), x.data(), (int64_t)n, as_log);
            for (float v : y)
                ASSERT_TRUE(std::isnan(v)) << table->name << " len " << n;
        }
        std::vector<float> minf(n, -INFINITY);
        table->softmax_row_f32(y.data(), minf.data(), (int64_t)n, 0);
        for (float v : y)
            ASSERT_TRUE(std::isnan(v)) << table->name << " len " << n;
    }
}

TEST_P(VecmathRows, SoftmaxIsCloseToALongDoubleReference)
{
    const vecmath_table *table = vecmath_table_of(GetParam());
    for (size_t n : {3, 256, 4099, 50000}) {
        std::vector<float> x = RandomRow<float>(n, 3 * n, 4.0f), y(n);
        table->softmax_row_f32(y.data(), x.data(), (int64_t)n, 0);
        long double max = -INFINITY, sum = 0;
        for (float v : x)
            max = std::max(max, (long double)v);
        for (float v : x)
            sum += std::exp((long double)v - max);
        for (size_t j = 0; j < n; j++) {
            long double want = std::exp((long double)x[j] - max) / sum;
            ASSERT_NEAR((double)y[j], (double)want, 1e-5 * (double)want + 1e-30)
                << table->name << " len " << n << " element " << j;
        }
    }
}

TEST_P(VecmathRows, LayerNormSumsInTheFixedOrderWithAndWithoutAffine)
{
    const vecmath_table *table = vecmath_table_of(GetParam());
    for (size_t n : kRowLengths) {
        std::vector<float> x = RandomRow<float>(n, n, 2.0f), w = RandomRow<float>(n, 11, 1.0f),
                           b = RandomRow<float>(n, 12, 1.0f), y(n);
        std::vector<double> xd = RandomRow<double>(n, n, 2.0), wd = RandomRow<double>(n, 13, 1.0),
                            bd = RandomRow<double>(n, 14, 1.0), yd(n);
        for (int affine = 0; affine < 4; affine++) {
            const float *wp = affine & 1 ? w.data() : nullptr,
                        *bp = affine & 2 ? b.data() : nullptr;
            const double *wdp = affine & 1 ? wd.data() : nullptr,
                         *bdp = affine & 2 ? bd.data() : nullptr;
            std::string what = std::string(table->name) + " affine " + std::to_string(affine);
            table->layer_norm_row_f32(y.data(), x.data(), wp, bp, (int64_t)n, 1e-5);
            ExpectSameBits<float, uint32_t>(
                y, LayerNormModel<float>(x, wp, bp, 1e-5, VECMATH_ROW_LANES_F32),
                what + " float32");
            table->layer_norm_row_f64(yd.data(), xd.data(), wdp, bdp, (int64_t)n, 1e-5);
            ExpectSameBits<double, uint64_t>(
                yd, LayerNormModel<double>(xd, wdp, bdp, 1e-5, VECMATH_ROW_LANES_F64),
                what + " float64");
        }
    }
}

// ---- the sum of a float32 array (See Note [Sums of float32 arrays]) ----

// The model: blocks of VECMATH_SUM_BLOCK_F32, each summed in the row model's order with 32
// partials, their float32 totals added in order into a double.
double SumModel(const std::vector<float> &x)
{
    double total = 0;
    for (size_t b = 0; b < x.size(); b += VECMATH_SUM_BLOCK_F32) {
        RowSum<float> block(VECMATH_SUM_LANES_F32);
        for (size_t j = b; j < x.size() && j < b + VECMATH_SUM_BLOCK_F32; j++)
            block.add(j - b, x[j]);
        total += (double)block.fold();
    }
    return total;
}

TEST_P(VecmathRows, SumAddsInTheFixedOrder)
{
    const vecmath_table *table = vecmath_table_of(GetParam());
    std::vector<size_t> lengths(std::begin(kRowLengths), std::end(kRowLengths));
    for (size_t n : {(size_t)0, (size_t)VECMATH_SUM_BLOCK_F32, (size_t)VECMATH_SUM_BLOCK_F32 + 1,
                     (size_t)3 * VECMATH_SUM_BLOCK_F32 - 5, (size_t)100003})
        lengths.push_back(n);
    for (size_t n : lengths) {
        // values of mixed magnitude, so that a different order rounds differently
        std::vector<float> x = RandomRow<float>(n, n + 7, 1000.0f);
        for (size_t j = 0; j < n; j += 3)
            x[j] *= 1e-4f;
        double got = table->sum_f32(x.data(), (int64_t)n), want = SumModel(x);
        EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0)
            << table->name << " n=" << n << ": " << got << " vs " << want;
    }
}

TEST_P(VecmathRows, SumIsCloseToALongDoubleReferenceAndPropagatesNanAndInfinity)
{
    const vecmath_table *table = vecmath_table_of(GetParam());
    std::vector<float> x = RandomRow<float>(1 << 20, 11, 1.0f);
    long double ref = 0, abs_sum = 0;
    for (float v : x) {
        ref += v;
        abs_sum += std::fabs((long double)v);
    }
    double got = table->sum_f32(x.data(), (int64_t)x.size());
    // the Note's bound: (32 + 5) float32 ulps of the sum of |x|
    EXPECT_LE(std::fabs((long double)got - ref), 37 * 0x1p-24L * abs_sum) << table->name;
    x[777777] = INFINITY;
    EXPECT_EQ(table->sum_f32(x.data(), (int64_t)x.size()), INFINITY) << table->name;
    x[5] = -INFINITY;
    EXPECT_TRUE(std::isnan(table->sum_f32(x.data(), (int64_t)x.size()))) << table->name;
    x[5] = 0;
    x[777777] = NAN;
    EXPECT_TRUE(std::isnan(table->sum_f32(x.data(), (int64_t)x.size()))) << table->name;
}

INSTANTIATE_TEST_SUITE_P(Tables, VecmathRows, ::testing::ValuesIn(RunnableCapabilities()),
                         [](const auto &info) {
                             return std::string(vecmath_capability_name(info.param));
                         });

// ---- small GEMMs (See Note [Small GEMMs]) ----

// The model of one element: the sum over k in order of k, each product fused into it where
// the table has FMA (AVX2, AVX-512) and rounded first where it has not (SSE2).
template <typename T> T GemmElementModel(bool fused, const std::vector<T> &a, int64_t a_rs,
                                         int64_t a_cs, const std::vector<T> &b, int64_t b_rs,
                                         int64_t b_cs, int64_t i, int64_t j, int64_t k)
{
    T acc = 0;
    for (int64_t p = 0; p < k; p++) {
        T x = a[i * a_rs + p * a_cs], y = b[p * b_rs + j * b_cs];
        if (fused) {
            acc = std::fma(x, y, acc);
        } else {
            volatile T product = x * y; // rounded on its own, never contracted
            acc = acc + product;
        }
    }
    return acc;
}

class VecmathGemm : public ::testing::TestWithParam<vecmath_capability> {};

template <typename T, typename B, typename Fn>
void CheckSmallGemm(vecmath_capability cap, Fn gemm, const char *dtype)
{
    const bool fused = cap != VECMATH_SSE2;
    const int64_t dims[] = {2, 3, 4, 5, 8, 15, 16, 17, 31, 33, 64};
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    for (int64_t n : dims)
        for (int64_t m : dims)
            for (int64_t k : {1, 3, 16, 17, 32, 64}) {
                if ((n * 7 + m * 3 + k) % 3 != 0 && n != 64) // a third of the shapes, and n = 64
                    continue;
                for (int layout = 0; layout < 4; layout++) {
                    // A row-major or transposed; B row-major, transposed, or with gaps
                    bool at = layout & 1;
                    int b_kind = layout >> 1 ? (n + m) % 2 + 1 : 0;
                    int64_t a_rs = at ? 1 : k + 1, a_cs = at ? n + 2 : 1;
                    int64_t b_rs = b_kind == 1 ? 1 : b_kind == 2 ? 2 * m + 1 : m,
                            b_cs = b_kind == 1 ? k : b_kind == 2 ? 2 : 1;
                    std::vector<T> a((size_t)(n * k * 3 + 2 * n + 2 * k + 4)),
                        b((size_t)(k * m * 4 + 2 * m + 2 * k + 4));
                    for (T &v : a)
                        v = (T)u(rng);
                    for (T &v : b)
                        v = (T)u(rng);
                    for (int scalars = 0; scalars < 3; scalars++) {
                        // alpha 1, beta 0 (C not read: nan in it stays out); alpha 0.5,
                        // beta 0; alpha 1.5, beta -0.25
                        double alpha = scalars == 0 ? 1.0 : scalars == 1 ? 0.5 : 1.5;
                        double beta = scalars == 2 ? -0.25 : 0.0;
                        int beta_zero = scalars != 2;
                        std::vector<T> c((size_t)(n * m), beta_zero ? (T)NAN : (T)0.75);
                        std::vector<T> c0 = c;
                        gemm(n, m, k, a.data(), a_rs, a_cs, b.data(), b_rs, b_cs, c.data(), m,
                             alpha, beta, beta_zero);
                        for (int64_t i = 0; i < n; i++)
                            for (int64_t j = 0; j < m; j++) {
                                T acc = GemmElementModel<T>(fused, a, a_rs, a_cs, b, b_rs, b_cs,
                                                            i, j, k);
                                volatile T scaled = (T)alpha * acc;
                                T want = scaled;
                                if (!beta_zero) {
                                    volatile T old = (T)beta * c0[(size_t)(i * m + j)];
                                    want = scaled + old;
                                }
                                ASSERT_EQ(Bits<B>(c[(size_t)(i * m + j)]), Bits<B>(want))
                                    << dtype << " on " << vecmath_capability_name(cap) << ": "
                                    << n << "x" << k << " @ " << k << "x" << m << ", layout "
                                    << layout << ", scalars " << scalars << ", C[" << i << "]["
                                    << j << "] = " << c[(size_t)(i * m + j)] << ", want " << want;
                            }
                    }
                }
            }
}

TEST_P(VecmathGemm, EveryElementIsItsSumInOrderOfKOnEveryLayout)
{
    const vecmath_table *table = vecmath_table_of(GetParam());
    CheckSmallGemm<float, uint32_t>(GetParam(), table->gemm_small_f32, "float32");
    CheckSmallGemm<double, uint64_t>(GetParam(), table->gemm_small_f64, "float64");
}

INSTANTIATE_TEST_SUITE_P(Tables, VecmathGemm, ::testing::ValuesIn(RunnableCapabilities()),
                         [](const auto &info) {
                             return std::string(vecmath_capability_name(info.param));
                         });

// ---- the elementwise ops on top ----

using VecmathOps = pith_test::LiveTensorFixture;

struct UnaryOp {
    const char *name;
    std::function<pith_tensor *(const pith_tensor *)> fn;
};
const std::vector<UnaryOp> &UnaryOps()
{
    static const std::vector<UnaryOp> ops = {
#define PITH_TEST_VECMATH_UNARY_OPS
#include "tests/kernels/generated/elementwise_cases.inc"
#undef PITH_TEST_VECMATH_UNARY_OPS
        {"gelu", [](const pith_tensor *x) { return pith_gelu(x, false); }},
        {"gelu_tanh", [](const pith_tensor *x) { return pith_gelu(x, true); }},
    };
    return ops;
}

Tensor Converted(const pith_tensor *t, pith_dtype dtype)
{
    return Tensor(pith_to_dtype(t, dtype));
}

// Every float16 and bfloat16 value: the op is the float32 op rounded once.
TEST_F(VecmathOps, HalfTypesComputeThroughFloat32)
{
    std::vector<uint16_t> bits(65536);
    for (int i = 0; i < 65536; i++)
        bits[i] = (uint16_t)i;
    const int64_t n = 65536;
    for (pith_dtype dtype : {PITH_FLOAT16, PITH_BFLOAT16}) {
        Tensor x(pith_from_data(bits.data(), 1, &n, dtype));
        ASSERT_TRUE(x) << pith_last_error();
        Tensor x32 = Converted(x.get(), PITH_FLOAT32);
        for (const UnaryOp &op : UnaryOps()) {
            Tensor got(op.fn(x.get()));
            Tensor want32(op.fn(x32.get()));
            ASSERT_TRUE(got && want32) << op.name << ": " << pith_last_error();
            Tensor want = Converted(want32.get(), dtype);
            const uint16_t *g = (const uint16_t *)pith_data_ptr(got.get());
            const uint16_t *w = (const uint16_t *)pith_data_ptr(want.get());
            for (int64_t i = 0; i < n; i++) {
                bool g_nan = dtype == PITH_FLOAT16 ? (g[i] & 0x7fff) > 0x7c00
                                                   : (g[i] & 0x7fff) > 0x7f80;
                bool w_nan = dtype == PITH_FLOAT16 ? (w[i] & 0x7fff) > 0x7c00
                                                   : (w[i] & 0x7fff) > 0x7f80;
                ASSERT_TRUE(g[i] == w[i] || (g_nan && w_nan))
                    << op.name << " of " << pith_dtype_name(dtype) << " bits " << i;
            }
        }
    }
}

// A strided operand goes through a buffer, a large one through threads: same bits.
TEST_F(VecmathOps, StridesAndThreadsChangeNoBits)
{
    const int64_t n = 3 * 100003;
    std::vector<float> data(n);
    std::mt19937_64 rng(5);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    for (float &v : data)
        v = normal(rng);
    Tensor x(pith_from_data(data.data(), 1, &n, PITH_FLOAT32));
    Tensor strided(pith_slice(x.get(), 0, 1, n, 3));
    Tensor packed(pith_contiguous(strided.get()));
    int threads = pith_get_num_threads();
    for (const UnaryOp &op : UnaryOps()) {
        pith_set_num_threads(1);
        Tensor one(op.fn(packed.get()));
        pith_set_num_threads(2);
        Tensor two(op.fn(packed.get()));
        Tensor from_strided(op.fn(strided.get()));
        ASSERT_TRUE(one && two && from_strided) << pith_last_error();
        const int64_t m = pith_numel(one.get());
        ASSERT_EQ(std::memcmp(pith_data_ptr(one.get()), pith_data_ptr(two.get()), m * 4), 0)
            << op.name << ": 1 and 2 threads differ";
        ASSERT_EQ(std::memcmp(pith_data_ptr(one.get()), pith_data_ptr(from_strided.get()), m * 4),
                  0)
            << op.name << ": strided and contiguous differ";
    }
    pith_set_num_threads(threads);
}

// x ** c for a Python number c: See Note [Pow with a scalar exponent].
TEST_F(VecmathOps, PowByAPythonScalarIsPyTorchsSpecialCase)
{
    std::vector<float> data = {0.0f,  -0.0f, 1.5f,  -1.5f, 3.0f,     -7.25f, INFINITY,
                               -INFINITY, NAN, 1e-30f, -1e-30f, 1e20f, 0.1f,   -0.1f};
    const int64_t n = (int64_t)data.size();
    Tensor x(pith_from_data(data.data(), 1, &n, PITH_FLOAT32));
    struct Case {
        double c;
        std::function<float(float)> want;
    };
    const Case cases[] = {
        {2, [](float v) { return v * v; }},
        {3, [](float v) { return v * v * v; }},
        {-1, [](float v) { return 1.0f / v; }},
        {-2, [](float v) { return 1.0f / (v * v); }},
        {0.5, [](float v) { return std::sqrt(v); }},
        {-0.5, [](float v) { return 1.0f / std::sqrt(v); }},
        {0, [](float) { return 1.0f; }},
        {1, [](float v) { return v; }},
    };
    for (const Case &c : cases) {
        Tensor exponent(shim_wrapped_number(c.c));
        Tensor got(pith_pow(x.get(), exponent.get()));
        ASSERT_TRUE(got) << pith_last_error();
        ASSERT_EQ(pith_tensor_dtype(got.get()), PITH_FLOAT32);
        const float *g = (const float *)pith_data_ptr(got.get());
        for (int64_t i = 0; i < n; i++) {
            float w = c.want(data[i]);
            ASSERT_TRUE(Bits<uint32_t>(g[i]) == Bits<uint32_t>(w) ||
                        (std::isnan(g[i]) && std::isnan(w)))
                << data[i] << " ** " << c.c << " = " << g[i] << ", not " << w;
        }
    }
}

// A 0-dim tensor exponent is a tensor: pow itself, as in PyTorch's pow.Tensor_Tensor.
TEST_F(VecmathOps, PowByAZeroDimTensorIsPow)
{
    std::vector<float> data = {0.0f, -0.0f, 1.5f, -2.0f, 3.0f};
    const int64_t n = (int64_t)data.size();
    Tensor x(pith_from_data(data.data(), 1, &n, PITH_FLOAT32));
    Tensor half(pith_full(0, nullptr, 0.5, PITH_FLOAT32));
    Tensor got(pith_pow(x.get(), half.get()));
    ASSERT_TRUE(got) << pith_last_error();
    const float *g = (const float *)pith_data_ptr(got.get());
    EXPECT_EQ(Bits<uint32_t>(g[1]), Bits<uint32_t>(0.0f)); // pow(-0, 0.5) = +0, sqrt would be -0
    EXPECT_TRUE(std::isnan(g[3]));
    EXPECT_FLOAT_EQ(g[4], std::sqrt(3.0f));
}

// bfloat16 rounds after each product of x * x * x, as PyTorch's operators do.
TEST_F(VecmathOps, BFloat16CubeRoundsAfterEachProduct)
{
    std::vector<float> data = {1.3046875f, -2.171875f, 7.5f, 0.0078125f, 3.140625f};
    const int64_t n = (int64_t)data.size();
    Tensor x32(pith_from_data(data.data(), 1, &n, PITH_FLOAT32));
    Tensor x = Converted(x32.get(), PITH_BFLOAT16);
    Tensor exponent(shim_wrapped_number(3));
    Tensor got(pith_pow(x.get(), exponent.get()));
    Tensor square(pith_mul(x.get(), x.get()));
    Tensor want(pith_mul(square.get(), x.get()));
    ASSERT_TRUE(got && want) << pith_last_error();
    EXPECT_EQ(std::memcmp(pith_data_ptr(got.get()), pith_data_ptr(want.get()), n * 2), 0);
}

}  // namespace
