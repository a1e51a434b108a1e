// views_test.cc — Note [Views and in-place] (autograd/views.c) through the public C API: an
// in-place write into a view rewrites its base's history (CopySlices), a view's grad_fn is
// replayed after its storage was written, and PyTorch's errors for writes it forbids.
#include <gtest/gtest.h>

#include <vector>

#include "common/pith_test.h"
#include "live_nodes.h"
#include "pith/autograd.h"
#include "pith/pith.h"

namespace {

using pith_test::HasError;
using pith_test::Tensor;
using pith_test::Values;

using Views = LiveNodesFixture;

Tensor Vec(std::vector<double> v, bool requires_grad)
{
    int64_t n = (int64_t)v.size();
    Tensor t(pith_empty(1, &n, PITH_FLOAT64));
    for (int64_t i = 0; i < n; i++)
        ((double *)pith_data_ptr(t.get()))[i] = v[(size_t)i];
    if (requires_grad) {
        EXPECT_EQ(pith_set_requires_grad(t.get(), true), PITH_OK);
    }
    return t;
}

Tensor Grad(const pith_tensor *t)
{
    pith_tensor *g = nullptr;
    EXPECT_EQ(pith_grad_get(t, &g), PITH_OK);
    return Tensor(g);
}

std::vector<double> Backward(pith_tensor *root, const pith_tensor *leaf)
{
    Tensor s(pith_sum(root, 0, nullptr, false));
    pith_tensor *roots[] = {s.get()};
    EXPECT_EQ(pith_backward(roots, nullptr, 1, 0), PITH_OK) << pith_last_error();
    Tensor g = Grad(leaf);
    return g ? Values(g.get()) : std::vector<double>{};
}

// y = 2x; y[2:4] *= y[0:2]; d sum(y) / dx = [2 + 2 y2, 2 + 2 y3, 2 y0, 2 y1]
TEST_F(Views, InPlaceOnAViewRewritesTheBaseHistory)
{
    Tensor x = Vec({1, 2, 3, 4}, true);
    Tensor two = Vec({2, 2, 2, 2}, false);
    Tensor y(pith_mul(x.get(), two.get()));
    Tensor head(pith_slice(y.get(), 0, 0, 2, 1));
    Tensor tail(pith_slice(y.get(), 0, 2, 4, 1));
    Tensor head_copy(pith_clone(head.get()));
    ASSERT_EQ(pith_mul_(tail.get(), head_copy.get()), PITH_OK) << pith_last_error();
    EXPECT_STREQ(pith_grad_fn_name(y.get()), "CopySlices");
    EXPECT_STREQ(pith_grad_fn_name(tail.get()), "AsStridedBackward0") << "replayed";
    EXPECT_EQ(Backward(y.get(), x.get()), (std::vector<double>{2 + 2 * 6, 2 + 2 * 8, 2 * 2, 2 * 4}));
}

// out = zeros(4) (no grad); out[1:3] = 3w; d sum(out^2) / dw = 18 w
TEST_F(Views, WritingAValueThatRequiresGradIntoATrackedBase)
{
    Tensor w = Vec({1, 2}, true);
    Tensor three = Vec({3, 3}, false);
    Tensor out = Vec({0, 0, 0, 0}, false);
    ASSERT_EQ(pith_autograd_track(out.get()), PITH_OK);
    Tensor region(pith_slice(out.get(), 0, 1, 3, 1));
    Tensor value(pith_mul(w.get(), three.get()));
    ASSERT_EQ(pith_copy_(region.get(), value.get()), PITH_OK) << pith_last_error();
    EXPECT_TRUE(pith_requires_grad(out.get()));
    Tensor sq(pith_mul(out.get(), out.get()));
    EXPECT_EQ(Backward(sq.get(), w.get()), (std::vector<double>{18, 36}));
}

TEST_F(Views, ViewOfALeafThatRequiresGradCannotBeWritten)
{
    Tensor x = Vec({1, 2, 3}, true);
    Tensor v(pith_slice(x.get(), 0, 0, 2, 1));
    Tensor two = Vec({2, 2}, false);
    EXPECT_EQ(pith_mul_(v.get(), two.get()), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "a view of a leaf Variable that requires grad"));
    EXPECT_EQ(pith_mul_(x.get(), Vec({1, 1, 1}, false).get()), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "a leaf Variable that requires grad is being used"));
}

TEST_F(Views, ViewMadeInNoGradCannotBeWrittenWithGradOn)
{
    Tensor x = Vec({1, 2, 3}, true);
    Tensor one = Vec({1, 1, 1}, false);
    Tensor y(pith_mul(x.get(), one.get()));
    pith_set_grad_enabled(false);
    Tensor v(pith_slice(y.get(), 0, 0, 2, 1));
    pith_set_grad_enabled(true);
    EXPECT_FALSE(pith_requires_grad(v.get()));
    EXPECT_EQ(pith_mul_(v.get(), Vec({2, 2}, false).get()), PITH_ERR_RUNTIME);
    EXPECT_TRUE(HasError(PITH_ERR_RUNTIME, "A view was created in no_grad mode"));
}

TEST_F(Views, ViewSeesAWriteThroughItsBase)
{
    Tensor x = Vec({1, 2, 3}, true);
    Tensor one = Vec({1, 1, 1}, false);
    Tensor y(pith_mul(x.get(), one.get()));
    Tensor v(pith_slice(y.get(), 0, 1, 3, 1));
    ASSERT_EQ(pith_mul_(y.get(), Vec({5, 5, 5}, false).get()), PITH_OK) << pith_last_error();
    // v's history now goes through y's MulBackward0 of the write: d sum(v) / dx = [0, 5, 5]
    EXPECT_EQ(Backward(v.get(), x.get()), (std::vector<double>{0, 5, 5}));
}

}  // namespace
