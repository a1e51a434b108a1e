/* Grad mode, inference mode, and inference tensors (include/pith/grad_mode.h). */
#include <thread>

#include "core_test.h"

namespace {

/* Each test starts from, and leaves, the defaults of a new thread. */
class GradModeTest : public CoreTest {
protected:
    void TearDown() override
    {
        pith_set_grad_enabled(true);
        pith_set_inference_mode_enabled(false);
        CoreTest::TearDown();
    }
};

const int64_t kTwo[] = {2};

TEST_F(GradModeTest, ANewThreadHasGradEnabledAndNoInferenceMode)
{
    EXPECT_TRUE(pith_grad_enabled());
    EXPECT_FALSE(pith_inference_mode_enabled());
}

TEST_F(GradModeTest, TheFlagsAreSetIndependently)
{
    pith_set_grad_enabled(false);
    EXPECT_FALSE(pith_grad_enabled());
    EXPECT_FALSE(pith_inference_mode_enabled());
    pith_set_inference_mode_enabled(true);
    EXPECT_TRUE(pith_inference_mode_enabled());
    EXPECT_FALSE(pith_grad_enabled());
    pith_set_grad_enabled(true);
    EXPECT_TRUE(pith_grad_enabled());
    EXPECT_TRUE(pith_inference_mode_enabled());
}

TEST_F(GradModeTest, TheFlagsArePerThread)
{
    pith_set_grad_enabled(false);
    pith_set_inference_mode_enabled(true);
    bool grad = false, inference = true;
    std::thread other([&] {
        grad = pith_grad_enabled();
        inference = pith_inference_mode_enabled();
        pith_set_grad_enabled(false); /* this thread's only */
    });
    other.join();
    EXPECT_TRUE(grad);
    EXPECT_FALSE(inference);
    pith_set_grad_enabled(true);
    std::thread again([&] { grad = pith_grad_enabled(); });
    again.join();
    EXPECT_TRUE(grad);
}

TEST_F(GradModeTest, TensorsMadeInInferenceModeAreInferenceTensors)
{
    Tensor normal(pith_zeros(1, kTwo, PITH_FLOAT32));
    pith_set_inference_mode_enabled(true);
    Tensor inside(pith_zeros(1, kTwo, PITH_FLOAT32));
    Tensor sum(pith_add(normal.get(), normal.get()));
    pith_set_inference_mode_enabled(false);
    Tensor after(pith_add(inside.get(), inside.get()));
    EXPECT_FALSE(pith_is_inference(normal.get()));
    EXPECT_TRUE(pith_is_inference(inside.get()));
    EXPECT_TRUE(pith_is_inference(sum.get()));
    EXPECT_FALSE(pith_is_inference(after.get()));
}

TEST_F(GradModeTest, AViewTakesItsBasesFlagWhateverTheMode)
{
    Tensor normal(pith_zeros(1, kTwo, PITH_FLOAT32));
    const int64_t shape[] = {1, 2};
    pith_set_inference_mode_enabled(true);
    Tensor inference(pith_zeros(1, kTwo, PITH_FLOAT32));
    Tensor view_of_normal(pith_reshape(normal.get(), 2, shape));
    Tensor alias_of_normal(pith_alias(normal.get()));
    pith_set_inference_mode_enabled(false);
    Tensor view_of_inference(pith_reshape(inference.get(), 2, shape));
    EXPECT_FALSE(pith_is_inference(view_of_normal.get()));
    EXPECT_FALSE(pith_is_inference(alias_of_normal.get()));
    EXPECT_TRUE(pith_is_inference(view_of_inference.get()));
}

TEST_F(GradModeTest, IsInferenceOfNullIsAnError)
{
    EXPECT_FALSE(pith_is_inference(nullptr));
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "is_inference"));
}

} // namespace
