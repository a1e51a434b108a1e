// The BLAS in the process and its threads (Note [BLAS threads], kernels/linalg_blas.c):
// what pith reports of it, its own thread count after pith_set_num_threads, and the
// calling thread's OpenMP count left as it was. The pthread build is tested from Python,
// in a subprocess with LD_LIBRARY_PATH (tests/python/test_blas_threads.py).
#include <cblas.h>
#include <omp.h>

#include <thread>

#include "reduce_test_util.h"

namespace pith_d_test {
namespace {

class LinalgBlas : public ReduceFixture {
protected:
    int threads_before_ = 0;
    void SetUp() override
    {
        ReduceFixture::SetUp();
        threads_before_ = pith_get_num_threads();
    }
    void TearDown() override
    {
        pith_set_num_threads(threads_before_);
        ReduceFixture::TearDown();
    }
};

/* A product big enough that OpenBLAS would use every thread it is given. */
void LargeProduct()
{
    int64_t sizes[] = {256, 256};
    Tensor a(pith_ones(2, sizes, PITH_FLOAT32));
    Tensor r(pith_matmul(a.get(), a.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    double v = 0;
    ASSERT_EQ(pith_item_at(r.get(), 777, &v), PITH_OK);
    EXPECT_EQ(v, 256);
}

TEST_F(LinalgBlas, ThreadingAndConfigAreOpenBlasOwn)
{
    int parallel = openblas_get_parallel();
    EXPECT_EQ((int)pith_blas_get_threading(), parallel);
    ASSERT_NE(pith_blas_get_config(), nullptr);
    EXPECT_STREQ(pith_blas_get_config(), openblas_get_config());
    EXPECT_NE(std::string(pith_blas_get_config()).find("OpenBLAS"), std::string::npos);
    /* The build that the tests link (CMakeLists.txt: Note [One OpenBLAS]). */
    EXPECT_EQ(pith_blas_get_threading() == PITH_BLAS_OPENMP,
              std::string(openblas_get_config()).find("USE_OPENMP") != std::string::npos);
}

TEST_F(LinalgBlas, BlasThreadCountFollowsPithSetNumThreads)
{
    for (int n : {1, 2, 1, 3, 2}) {
        pith_set_num_threads(n);
        EXPECT_EQ(openblas_get_num_threads(), n) << "after pith_set_num_threads(" << n << ")";
        EXPECT_EQ(pith_blas_get_num_threads(), n);
        LargeProduct();
        /* A call brings the BLAS no other count (the OpenMP build would adopt it). */
        EXPECT_EQ(openblas_get_num_threads(), n) << "after a product with " << n;
    }
}

TEST_F(LinalgBlas, CallsAndSettingsLeaveTheCallersOpenMpCountAlone)
{
    int saved = omp_get_max_threads();
    omp_set_num_threads(3);
    pith_set_num_threads(2);
    EXPECT_EQ(omp_get_max_threads(), 3);
    LargeProduct();
    EXPECT_EQ(omp_get_max_threads(), 3);
    Tensor v = FromValues({4}, PITH_FLOAT32, {1, 2, 3, 4});
    Tensor d(pith_matmul(v.get(), v.get())); /* a small product, on one thread */
    ASSERT_NE(d, nullptr) << pith_last_error();
    EXPECT_EQ(Values(d.get()), std::vector<double>{30});
    EXPECT_EQ(omp_get_max_threads(), 3);
    omp_set_num_threads(saved);
}

TEST_F(LinalgBlas, SettingsFromManyThreadsEndWithTheLastOne)
{
    /* The count and the BLAS's count are set together (core/parallel.c's lock). */
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++)
        threads.emplace_back([t] {
            for (int i = 0; i < 50; i++)
                pith_set_num_threads(1 + (t + i) % 3);
        });
    for (auto &th : threads)
        th.join();
    EXPECT_EQ(openblas_get_num_threads(), pith_get_num_threads());
}

} // namespace
} // namespace pith_d_test
