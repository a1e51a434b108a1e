// The optimizer kernels through the public C API (pith/optim.h): each optimizer against a
// plain scalar loop of its formula (the same operations, rounded to the dtype after each,
// as Note [The optimizer kernels round as pith's ops] in kernels/optim.c says), a
// non-contiguous parameter, threads on and off, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "pith/pith.h"

namespace pith_optim_test {
namespace {

using Floats = std::vector<float>;

/* Owns the tensors a test makes. */
struct Pool {
    std::vector<pith_tensor *> all;
    ~Pool()
    {
        for (pith_tensor *t : all)
            pith_release(t);
    }
    pith_tensor *keep(pith_tensor *t)
    {
        EXPECT_NE(t, nullptr) << pith_last_error();
        all.push_back(t);
        return t;
    }
    pith_tensor *of(const Floats &v, std::vector<int64_t> sizes)
    {
        return keep(pith_from_data(v.data(), (int)sizes.size(), sizes.data(), PITH_FLOAT32));
    }
    pith_tensor *of(const Floats &v) { return of(v, {(int64_t)v.size()}); }
    pith_tensor *step() { return keep(pith_zeros(0, nullptr, PITH_FLOAT32)); }
};

Floats Values(const pith_tensor *t)
{
    pith_tensor *c = pith_contiguous(t);
    const float *p = (const float *)pith_data_ptr(c);
    Floats v(p, p + pith_numel(c));
    pith_release(c);
    return v;
}

Floats Ramp(size_t n, float a, float b)
{
    Floats v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = a + b * (float)std::sin((double)i * 1.7 + a);
    return v;
}

void ExpectBits(const Floats &want, const pith_tensor *got, const std::string &what)
{
    Floats g = Values(got);
    ASSERT_EQ(g.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); i++)
        EXPECT_EQ(0, std::memcmp(&want[i], &g[i], sizeof(float)))
            << what << "[" << i << "]: want " << want[i] << ", got " << g[i];
}

/* The formula's lerp_ (Note [lerp as pith's ops]). */
float Lerp(float start, float end, double w)
{
    return std::fabs(w) < 0.5 ? start + (float)w * (end - start)
                              : end - (float)(1.0 - w) * (end - start);
}

/* One optimizer test: `run` calls the kernel on (param, grad, states) for one step,
 * `ref` does the same step on the scalar copies with the step number (1, 2, ...). */
struct Case {
    int nstates;
    std::function<pith_status(pith_tensor *p, pith_tensor *g, pith_tensor **s, pith_tensor *step)> run;
    std::function<void(float &p, float g, float *s, double step)> ref;
};

void RunCase(const Case &c, bool noncontiguous)
{
    Pool pool;
    const int64_t rows = 3, cols = 5;
    Floats p0 = Ramp(rows * cols, 0.5f, 1.0f);
    pith_tensor *param;
    if (noncontiguous) {
        // A transposed view: param[i][j] = base[j][i].
        Floats base(rows * cols);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                base[j * rows + i] = p0[i * cols + j];
        param = pool.keep(pith_transpose(pool.of(base, {cols, rows}), 0, 1));
        ASSERT_FALSE(pith_is_contiguous(param));
    } else {
        param = pool.of(p0, {rows, cols});
    }
    std::vector<pith_tensor *> states;
    std::vector<Floats> ref_states;
    for (int k = 0; k < c.nstates; k++) {
        Floats init(rows * cols, 0.0f);
        states.push_back(pool.of(init, {rows, cols}));
        ref_states.push_back(init);
    }
    pith_tensor *step = pool.step();
    Floats p = p0;
    for (int s = 1; s <= 8; s++) {
        Floats g = Ramp(rows * cols, (float)s, 0.7f);
        pith_tensor *grad = pool.of(g, {rows, cols});
        ASSERT_EQ(c.run(param, grad, states.data(), step), PITH_OK) << pith_last_error();
        for (size_t i = 0; i < p.size(); i++) {
            float st[4];
            for (int k = 0; k < c.nstates; k++)
                st[k] = ref_states[k][i];
            c.ref(p[i], g[i], st, s);
            for (int k = 0; k < c.nstates; k++)
                ref_states[k][i] = st[k];
        }
        ExpectBits(p, param, "param after step " + std::to_string(s));
        for (int k = 0; k < c.nstates; k++)
            ExpectBits(ref_states[k], states[k], "state " + std::to_string(k));
        ExpectBits({(float)s}, step, "step");
    }
}

class OptimTest : public ::testing::TestWithParam<bool> {};

TEST_P(OptimTest, SgdWithMomentumNesterovAndWeightDecayMatchesTheScalarLoop)
{
    pith_sgd_options o = {};
    o.lr = 0.1, o.momentum = 0.9, o.weight_decay = 0.01, o.nesterov = true;
    int calls = 0;
    RunCase({1,
             [&](pith_tensor *p, pith_tensor *g, pith_tensor **s, pith_tensor *step) {
                 // SGD keeps no step: the case's step counter is advanced by hand.
                 float one = 1.0f;
                 pith_tensor *inc = pith_from_data(&one, 0, nullptr, PITH_FLOAT32);
                 pith_add_(step, inc);
                 pith_release(inc);
                 return pith_optim_sgd(&p, (const pith_tensor *const *)&g, s, 1, calls++ == 0, &o);
             },
             [&](float &p, float g, float *s, double step) {
                 g = g + (float)o.weight_decay * p;
                 s[0] = step == 1 ? g : s[0] * (float)o.momentum + (float)(1.0 - o.dampening) * g;
                 g = g + (float)o.momentum * s[0];
                 p = p + (float)(-o.lr) * g;
             }},
            GetParam());
}

TEST_P(OptimTest, AdamWithAmsgradMatchesTheScalarLoop)
{
    pith_adam_options o = PITH_ADAM_OPTIONS_DEFAULT;
    o.lr = 0.01, o.weight_decay = 0.1, o.amsgrad = true;
    RunCase({3,
             [&](pith_tensor *p, pith_tensor *g, pith_tensor **s, pith_tensor *step) {
                 return pith_optim_adam(&p, (const pith_tensor *const *)&g, &s[0], &s[1], &s[2],
                                        &step, 1, &o);
             },
             [&](float &p, float g, float *s, double step) {
                 g = g + (float)o.weight_decay * p;
                 s[0] = Lerp(s[0], g, 1 - o.beta1);
                 s[1] = s[1] * (float)o.beta2;
                 s[1] = s[1] + (float)(1 - o.beta2) * g * g;
                 s[2] = std::isnan(s[2]) ? s[2] : s[2] < s[1] ? s[1] : s[2];
                 double bc1 = 1 - std::pow(o.beta1, step), bc2 = 1 - std::pow(o.beta2, step);
                 float denom = std::sqrt(s[2]) / (float)std::pow(bc2, 0.5) + (float)o.eps;
                 p = p + (float)(-(o.lr / bc1)) * s[0] / denom;
             }},
            GetParam());
}

TEST_P(OptimTest, AdamwDecaysTheParameterFirst)
{
    pith_adam_options o = PITH_ADAMW_OPTIONS_DEFAULT;
    o.lr = 0.01;
    RunCase({2,
             [&](pith_tensor *p, pith_tensor *g, pith_tensor **s, pith_tensor *step) {
                 return pith_optim_adamw(&p, (const pith_tensor *const *)&g, &s[0], &s[1],
                                         nullptr, &step, 1, &o);
             },
             [&](float &p, float g, float *s, double step) {
                 p = p * (float)(1 - o.lr * o.weight_decay);
                 s[0] = Lerp(s[0], g, 1 - o.beta1);
                 s[1] = s[1] * (float)o.beta2 + (float)(1 - o.beta2) * g * g;
                 double bc1 = 1 - std::pow(o.beta1, step), bc2 = 1 - std::pow(o.beta2, step);
                 float denom = std::sqrt(s[1]) / (float)std::pow(bc2, 0.5) + (float)o.eps;
                 p = p + (float)(-(o.lr / bc1)) * s[0] / denom;
             }},
            GetParam());
}

TEST_P(OptimTest, AdagradMatchesTheScalarLoop)
{
    pith_adagrad_options o = PITH_ADAGRAD_OPTIONS_DEFAULT;
    o.lr_decay = 0.1, o.maximize = true;
    RunCase({1,
             [&](pith_tensor *p, pith_tensor *g, pith_tensor **s, pith_tensor *step) {
                 return pith_optim_adagrad(&p, (const pith_tensor *const *)&g, s, &step, 1, &o);
             },
             [&](float &p, float g, float *s, double step) {
                 g = -g;
                 s[0] = s[0] + 1.0f * g * g;
                 float std_ = std::sqrt(s[0]) + (float)o.eps;
                 p = p + (float)(-(o.lr / (1 + (step - 1) * o.lr_decay))) * g / std_;
             }},
            GetParam());
}

TEST_P(OptimTest, CenteredRmspropWithMomentumMatchesTheScalarLoop)
{
    pith_rmsprop_options o = PITH_RMSPROP_OPTIONS_DEFAULT;
    o.momentum = 0.5, o.centered = true;
    RunCase({3,
             [&](pith_tensor *p, pith_tensor *g, pith_tensor **s, pith_tensor *step) {
                 return pith_optim_rmsprop(&p, (const pith_tensor *const *)&g, &s[0], &s[1],
                                           &s[2], &step, 1, &o);
             },
             [&](float &p, float g, float *s, double) {
                 s[0] = s[0] * (float)o.alpha + (float)(1 - o.alpha) * g * g;
                 s[1] = Lerp(s[1], g, 1 - o.alpha);
                 float avg = std::sqrt(s[0] + -1.0f * s[1] * s[1]) + (float)o.eps;
                 s[2] = s[2] * (float)o.momentum + 1.0f * g / avg;
                 p = p + (float)(-o.lr) * s[2];
             }},
            GetParam());
}

TEST_P(OptimTest, AdamaxMatchesTheScalarLoop)
{
    pith_adamax_options o = PITH_ADAMAX_OPTIONS_DEFAULT;
    o.weight_decay = 0.05;
    RunCase({2,
             [&](pith_tensor *p, pith_tensor *g, pith_tensor **s, pith_tensor *step) {
                 return pith_optim_adamax(&p, (const pith_tensor *const *)&g, &s[0], &s[1],
                                          &step, 1, &o);
             },
             [&](float &p, float g, float *s, double step) {
                 g = g + (float)o.weight_decay * p;
                 s[0] = Lerp(s[0], g, 1 - o.beta1);
                 float a = s[1] * (float)o.beta2, b = std::fabs(g) + (float)o.eps;
                 s[1] = a != a ? a : b != b ? b : a < b ? b : a;
                 p = p + (float)(-(o.lr / (1 - std::pow(o.beta1, step)))) * s[0] / s[1];
             }},
            GetParam());
}

TEST_P(OptimTest, NadamMatchesTheScalarLoop)
{
    pith_nadam_options o = PITH_NADAM_OPTIONS_DEFAULT;
    float mu_product = 1.0f;
    double last_step = 0;
    Pool pool;
    Floats one = {1.0f};
    pith_tensor *mu = pool.keep(pith_from_data(one.data(), 0, nullptr, PITH_FLOAT32));
    RunCase({2,
             [&](pith_tensor *p, pith_tensor *g, pith_tensor **s, pith_tensor *step) {
                 return pith_optim_nadam(&p, (const pith_tensor *const *)&g, &s[0], &s[1], &mu,
                                         &step, 1, &o);
             },
             [&](float &p, float g, float *s, double step) {
                 double m = o.beta1 * (1.0 - 0.5 * std::pow(0.96, step * o.momentum_decay));
                 double next = o.beta1 * (1.0 - 0.5 * std::pow(0.96, (step + 1) * o.momentum_decay));
                 if (step != last_step) { // once per step, not per element
                     mu_product = mu_product * (float)m;
                     last_step = step;
                 }
                 s[0] = Lerp(s[0], g, 1 - o.beta1);
                 s[1] = s[1] * (float)o.beta2 + (float)(1 - o.beta2) * g * g;
                 float denom = std::sqrt(s[1] / (float)(1 - std::pow(o.beta2, step))) + (float)o.eps;
                 p = p + (float)(-o.lr * (1.0 - m) / (1.0 - mu_product)) * g / denom;
                 p = p + (float)((-o.lr * next) / (1.0 - mu_product * next)) * s[0] / denom;
             }},
            GetParam());
    ExpectBits({mu_product}, mu, "mu_product");
}

TEST_P(OptimTest, AdadeltaMatchesTheScalarLoop)
{
    pith_adadelta_options o = PITH_ADADELTA_OPTIONS_DEFAULT;
    RunCase({2,
             [&](pith_tensor *p, pith_tensor *g, pith_tensor **s, pith_tensor *step) {
                 return pith_optim_adadelta(&p, (const pith_tensor *const *)&g, &s[0], &s[1],
                                            &step, 1, &o);
             },
             [&](float &p, float g, float *s, double) {
                 s[0] = s[0] * (float)o.rho + (float)(1 - o.rho) * g * g;
                 float std_ = std::sqrt(s[0] + (float)o.eps);
                 float delta = std::sqrt(s[1] + (float)o.eps) / std_ * g;
                 s[1] = s[1] * (float)o.rho + (float)(1 - o.rho) * delta * delta;
                 p = p + (float)(-o.lr) * delta;
             }},
            GetParam());
}

TEST_P(OptimTest, RadamMatchesTheScalarLoopInBothBranches)
{
    pith_radam_options o = PITH_RADAM_OPTIONS_DEFAULT;
    o.beta2 = 0.9; // rho_t <= 5 up to step 5, > 5 from step 6 (of RunCase's 8)
    RunCase({2,
             [&](pith_tensor *p, pith_tensor *g, pith_tensor **s, pith_tensor *step) {
                 return pith_optim_radam(&p, (const pith_tensor *const *)&g, &s[0], &s[1], &step,
                                         1, &o);
             },
             [&](float &p, float g, float *s, double step) {
                 s[0] = Lerp(s[0], g, 1 - o.beta1);
                 s[1] = s[1] * (float)o.beta2 + (float)(1 - o.beta2) * g * g;
                 double bc1 = 1 - std::pow(o.beta1, step), bc2 = 1 - std::pow(o.beta2, step);
                 double rho_inf = 2 / (1 - o.beta2) - 1;
                 double rho_t = rho_inf - 2 * step * std::pow(o.beta2, step) / bc2;
                 float update = s[0] / (float)bc1 * (float)o.lr;
                 if (rho_t > 5.0) {
                     double rect = std::pow((rho_t - 4) * (rho_t - 2) * rho_inf /
                                                ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0.5);
                     float adaptive = (float)std::pow(bc2, 0.5) / (std::sqrt(s[1]) + (float)o.eps);
                     update = update * adaptive * (float)rect;
                 }
                 p = p + -1.0f * update;
             }},
            GetParam());
}

INSTANTIATE_TEST_SUITE_P(Layouts, OptimTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &info) {
                             return info.param ? "NonContiguousParam" : "Contiguous";
                         });

TEST(OptimKernels, ThreadsOnAndOffGiveTheSameBits)
{
    const size_t big = 100000; // several grains (core/parallel.h)
    Floats results[2];
    int old = pith_get_num_threads();
    for (int threads : {1, 2}) {
        pith_set_num_threads(threads);
        Pool pool;
        pith_tensor *params[3] = {pool.of(Ramp(big, 0.1f, 1.0f)), pool.of(Ramp(7, 0.2f, 1.0f)),
                                  pool.of(Ramp(big / 2, 0.3f, 1.0f))};
        const pith_tensor *grads[3] = {pool.of(Ramp(big, 1.1f, 0.5f)),
                                       pool.of(Ramp(7, 1.2f, 0.5f)),
                                       pool.of(Ramp(big / 2, 1.3f, 0.5f))};
        pith_tensor *m[3], *v[3], *steps[3];
        for (int i = 0; i < 3; i++) {
            m[i] = pool.of(Floats(pith_numel(params[i]), 0.0f));
            v[i] = pool.of(Floats(pith_numel(params[i]), 0.0f));
            steps[i] = pool.step();
        }
        pith_adam_options o = PITH_ADAMW_OPTIONS_DEFAULT;
        for (int s = 0; s < 2; s++)
            ASSERT_EQ(pith_optim_adamw(params, grads, m, v, nullptr, steps, 3, &o), PITH_OK);
        for (int i = 0; i < 3; i++) {
            Floats p = Values(params[i]);
            results[threads - 1].insert(results[threads - 1].end(), p.begin(), p.end());
        }
    }
    pith_set_num_threads(old);
    ASSERT_EQ(results[0].size(), results[1].size());
    EXPECT_EQ(0, std::memcmp(results[0].data(), results[1].data(),
                             results[0].size() * sizeof(float)));
}

TEST(OptimKernels, FoundInfSkipsTheWholeStep)
{
    Pool pool;
    pith_tensor *p = pool.of({1.0f, 2.0f}), *m = pool.of({0.0f, 0.0f});
    pith_tensor *v = pool.of({0.0f, 0.0f}), *step = pool.step();
    const pith_tensor *g = pool.of({1.0f, 1.0f});
    pith_adam_options o = PITH_ADAM_OPTIONS_DEFAULT;
    o.found_inf = pool.of({1.0f}, {});
    ASSERT_EQ(pith_optim_adam(&p, &g, &m, &v, nullptr, &step, 1, &o), PITH_OK);
    ExpectBits({1.0f, 2.0f}, p, "param");
    ExpectBits({0.0f}, step, "step");
}

TEST(OptimKernels, ListsOfDifferentLengthsAreRefused)
{
    Pool pool;
    pith_tensor *p = pool.of({1.0f}), *step = pool.step();
    const pith_tensor *g = pool.of({1.0f});
    pith_tensor *m = pool.of({0.0f});
    pith_adam_options o = PITH_ADAM_OPTIONS_DEFAULT;
    // exp_avg_sqs NULL: a needed list that is empty.
    EXPECT_EQ(pith_optim_adam(&p, &g, &m, nullptr, nullptr, &step, 1, &o), PITH_ERR_RUNTIME);
    EXPECT_NE(std::string(pith_last_error()).find("exp_avg_sqs has 0 tensors, but self has 1"),
              std::string::npos)
        << pith_last_error();
    ExpectBits({1.0f}, p, "param");
    ExpectBits({0.0f}, step, "step");
}

TEST(OptimKernels, StateOfAnotherShapeOrDtypeIsRefused)
{
    Pool pool;
    pith_tensor *p = pool.of({1.0f, 2.0f}), *step = pool.step();
    const pith_tensor *g = pool.of({1.0f, 1.0f});
    pith_tensor *wrong_shape = pool.of({0.0f, 0.0f, 0.0f});
    double zeros[2] = {0, 0};
    int64_t two = 2;
    pith_tensor *wrong_dtype = pool.keep(pith_from_data(zeros, 1, &two, PITH_FLOAT64));
    pith_adagrad_options o = PITH_ADAGRAD_OPTIONS_DEFAULT;
    EXPECT_EQ(pith_optim_adagrad(&p, &g, &wrong_shape, &step, 1, &o), PITH_ERR_RUNTIME);
    EXPECT_NE(std::string(pith_last_error()).find("state_sums[0] has shape [3]"),
              std::string::npos)
        << pith_last_error();
    EXPECT_EQ(pith_optim_adagrad(&p, &g, &wrong_dtype, &step, 1, &o), PITH_ERR_RUNTIME);
    EXPECT_NE(std::string(pith_last_error()).find("has dtype float64"), std::string::npos)
        << pith_last_error();
}

TEST(OptimKernels, NullArgumentsAreRefused)
{
    Pool pool;
    pith_tensor *p = pool.of({1.0f});
    const pith_tensor *g = pool.of({1.0f});
    EXPECT_EQ(pith_optim_sgd(&p, &g, nullptr, 1, false, nullptr), PITH_ERR_VALUE);
    EXPECT_NE(std::string(pith_last_error()).find("argument 'options' is NULL"),
              std::string::npos);
    pith_sgd_options o = PITH_SGD_OPTIONS_DEFAULT;
    EXPECT_EQ(pith_optim_sgd(nullptr, &g, nullptr, 1, false, &o), PITH_ERR_VALUE);
    EXPECT_EQ(pith_optim_sgd(nullptr, nullptr, nullptr, 0, false, &o), PITH_OK); // nothing
}

TEST(OptimKernels, IntegerParametersAreRefused)
{
    Pool pool;
    int64_t values[1] = {1}, one = 1;
    pith_tensor *p = pool.keep(pith_from_data(values, 1, &one, PITH_INT64));
    const pith_tensor *g = p;
    pith_sgd_options o = PITH_SGD_OPTIONS_DEFAULT;
    EXPECT_EQ(pith_optim_sgd(&p, &g, nullptr, 1, false, &o), PITH_ERR_NOT_IMPLEMENTED);
    EXPECT_NE(std::string(pith_last_error()).find("self[0] has dtype int64"), std::string::npos)
        << pith_last_error();
}

}  // namespace
}  // namespace pith_optim_test
