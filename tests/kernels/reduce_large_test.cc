// Reductions with few outputs and a large reduced space, where the engine also splits the
// reduced space into chunks (both loop orders): values, first-extreme indices across chunk
// boundaries, and results that do not depend on the thread count.
#include "reduce_test_util.h"

namespace pith_d_test {
namespace {

using ReduceLarge = ReduceFixture;

/* Shapes with 3 outputs along a long dim 1 (inner order) and 16 outputs of a long dim 0
 * (outer order), each reduced over the long dim. */
struct LongCase {
    Shape sizes;
    int dim;
};
const LongCase kLongCases[] = {{{3, 150001}, 1}, {{70001, 16}, 0}, {{40001, 3, 4}, 0}};

TEST_F(ReduceLarge, SumMeanAndVarOverALongDimMatchReference)
{
    std::mt19937 rng(111);
    for (const LongCase &c : kLongCases) {
        for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64, PITH_INT16}) {
            Tensor x = MakeTensor(rng, c.sizes, dtype, Layout::Contiguous, -1, 3);
            auto groups = Groups(c.sizes, Values(x.get()), 1u << c.dim);
            Tensor s(pith_sum(x.get(), 1, &c.dim, false));
            ASSERT_NE(s, nullptr) << pith_last_error();
            std::vector<double> want, tol;
            for (auto &g : groups) {
                double v = 0;
                for (double e : g)
                    v += e;
                want.push_back(v);
                tol.push_back(IsFloat(dtype) ? 2e-7 * AbsSum(g) : 0);
            }
            EXPECT_TRUE(AllClose(s.get(), want, tol)) << pith_dtype_name(dtype) << " dim " << c.dim;
            if (!IsFloat(dtype))
                continue;
            Tensor v(pith_var(x.get(), 1, &c.dim, 1, false));
            ASSERT_NE(v, nullptr);
            want.clear();
            tol.clear();
            for (auto &g : groups) {
                double mean = 0, m2 = 0;
                for (double e : g)
                    mean += e / (double)g.size();
                for (double e : g)
                    m2 += (e - mean) * (e - mean);
                want.push_back(m2 / (double)(g.size() - 1));
                tol.push_back(1e-6 * want.back());
            }
            EXPECT_TRUE(AllClose(v.get(), want, tol)) << pith_dtype_name(dtype) << " dim " << c.dim;
        }
    }
}

TEST_F(ReduceLarge, MaxDimOverALongDimFindsTheFirstOfEqualMaxima)
{
    for (const LongCase &c : kLongCases) {
        int64_t n = Numel(c.sizes), len = c.sizes[(size_t)c.dim];
        std::vector<float> f((size_t)n);
        for (int64_t i = 0; i < n; i++)
            f[(size_t)i] = (float)((i * 7919) % 1000) * 0.001f;
        /* Every output gets its maximum twice, far apart (in different chunks). */
        int64_t inner = n / (len * (c.dim == 0 ? 1 : c.sizes[0]));
        int64_t outer_count = c.dim == 0 ? 1 : c.sizes[0];
        int64_t first = len / 3 + 1, second = len - 2;
        for (int64_t o = 0; o < outer_count; o++)
            for (int64_t i = 0; i < inner; i++) {
                f[(size_t)((o * len + first) * inner + i)] = 9;
                f[(size_t)((o * len + second) * inner + i)] = 9;
            }
        Tensor x(pith_from_data(f.data(), (int)c.sizes.size(), c.sizes.data(), PITH_FLOAT32));
        pith_tensor *v, *idx;
        ASSERT_EQ(pith_max_dim(x.get(), c.dim, false, &v, &idx), PITH_OK) << pith_last_error();
        Tensor values(v), indices(idx);
        for (double e : Values(values.get()))
            EXPECT_EQ(e, 9);
        for (double e : Values(indices.get()))
            EXPECT_EQ(e, (double)first) << "dim " << c.dim;
        Tensor am(pith_argmax(x.get(), &c.dim, false));
        ASSERT_NE(am, nullptr);
        EXPECT_EQ(Values(am.get()), Values(indices.get()));
    }
}

TEST_F(ReduceLarge, ChunkedResultsDoNotDependOnTheThreadCount)
{
    std::mt19937 rng(113);
    int saved = pith_get_num_threads();
    for (const LongCase &c : kLongCases) {
        Tensor x = MakeTensor(rng, c.sizes, PITH_FLOAT32, Layout::Contiguous);
        std::vector<double> results[2];
        for (int threads = 1; threads <= 2; threads++) {
            pith_set_num_threads(threads);
            Tensor s(pith_sum(x.get(), 1, &c.dim, false)), m(pith_std(x.get(), 1, &c.dim, 1, false));
            ASSERT_TRUE(s && m);
            results[threads - 1] = Values(s.get());
            for (double e : Values(m.get()))
                results[threads - 1].push_back(e);
        }
        EXPECT_EQ(results[0], results[1]) << "dim " << c.dim;
    }
    pith_set_num_threads(saved);
}

} // namespace
} // namespace pith_d_test
