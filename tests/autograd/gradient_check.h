/* gradient_check.h — what the formula tests share (formulas_test.cc, composites_test.cc):
 * float64 samples, the check of an op's gradient against central differences through the
 * public C API, node chains, and boxed calls of the ops without a public C function. */
#ifndef PITH_TESTS_AUTOGRAD_GRADIENT_CHECK_H
#define PITH_TESTS_AUTOGRAD_GRADIENT_CHECK_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/generated/node_names.h"
#include "common/pith_test.h"
#include "pith/autograd.h"
#include "pith/grad_mode.h"
#include "pith/pith.h"

namespace gradient_check {

using pith_test::Shape;
using pith_test::Tensor;
using pith_test::Values;

/* The generated node name of an overload (AG_FORALL_NODE_NAMES), "" when it has none. */
inline std::string NodeNameOf(const std::string &overload)
{
    struct Row {
        const char *overload, *node;
    };
#define ROW_(o, n) {o, n},
    static const Row rows[] = {AG_FORALL_NODE_NAMES(ROW_)};
#undef ROW_
    for (const Row &r : rows)
        if (overload == r.overload)
            return r.node;
    return "";
}

/* A float64 tensor of `sizes` with distinct, deterministic values in about [lo, hi]. */
inline Tensor Sample(Shape sizes, double lo = -1.5, double hi = 1.5, bool requires_grad = true)
{
    int64_t n = 1;
    for (int64_t s : sizes)
        n *= s;
    std::vector<double> data((size_t)n);
    for (int64_t i = 0; i < n; i++)
        data[(size_t)i] = lo + (hi - lo) * (double)((i * 37 + 11) % 97) / 96.0;
    Tensor t(pith_from_data(data.data(), (int)sizes.size(), sizes.data(), PITH_FLOAT64));
    if (requires_grad) {
        EXPECT_EQ(pith_set_requires_grad(t.get(), true), PITH_OK);
    }
    return t;
}

inline Tensor Ints(Shape sizes, std::vector<int64_t> values)
{
    return Tensor(pith_from_data(values.data(), (int)sizes.size(), sizes.data(), PITH_INT64));
}

using Op = std::function<pith_tensor *(const std::vector<pith_tensor *> &)>;

/* sum(f(x) * w) for fixed weights w of f(x)'s shape: every output element counts. */
inline Tensor Loss(const Op &f, const std::vector<pith_tensor *> &x)
{
    Tensor y(f(x));
    if (!y)
        return nullptr;
    Shape sizes = pith_test::Sizes(y.get());
    Tensor w = Sample(sizes, -1.0, 1.0, false);
    Tensor yw(pith_mul(y.get(), w.get()));
    return Tensor(pith_sum(yw.get(), 0, nullptr, false));
}

inline double LossValue(const Op &f, const std::vector<pith_tensor *> &x)
{
    bool was = pith_grad_enabled();
    pith_set_grad_enabled(false);
    Tensor loss = Loss(f, x);
    pith_set_grad_enabled(was);
    double v = NAN;
    EXPECT_EQ(pith_item(loss.get(), &v), PITH_OK) << pith_last_error();
    return v;
}

/* The gradient that backward accumulates into each input that requires grad matches
 * central differences of the loss, element by element; f's output is made by a node named
 * `node` (`what` names the op in messages). */
inline void ExpectGradientsNamed(const Op &f, const std::vector<pith_tensor *> &x,
                                 const std::string &node, const std::string &what)
{
    Tensor y(f(x));
    ASSERT_TRUE(y) << pith_last_error();
    const char *name = pith_grad_fn_name(y.get());
    ASSERT_NE(name, nullptr) << what << ": the output has no grad_fn";
    EXPECT_EQ(std::string(name), node) << what;
    y.reset();
    Tensor loss = Loss(f, x);
    ASSERT_TRUE(loss) << pith_last_error();
    pith_tensor *root = loss.get();
    ASSERT_EQ(pith_backward(&root, nullptr, 1, 0), PITH_OK) << pith_last_error();
    const double eps = 1e-6;
    for (size_t k = 0; k < x.size(); k++) {
        if (!pith_requires_grad(x[k]))
            continue;
        pith_tensor *g = nullptr;
        ASSERT_EQ(pith_grad_get(x[k], &g), PITH_OK);
        ASSERT_NE(g, nullptr) << what << ": input " << k << " got no gradient";
        Tensor grad(g);
        ASSERT_EQ(pith_test::Sizes(grad.get()), pith_test::Sizes(x[k]));
        std::vector<double> analytic = Values(grad.get());
        double *data = (double *)pith_data_ptr(x[k]);
        for (size_t j = 0; j < analytic.size(); j++) {
            double keep = data[j];
            data[j] = keep + eps;
            double plus = LossValue(f, x);
            data[j] = keep - eps;
            double minus = LossValue(f, x);
            data[j] = keep;
            double numeric = (plus - minus) / (2 * eps);
            EXPECT_NEAR(analytic[j], numeric, 1e-6 * std::max(1.0, std::fabs(numeric)))
                << what << ": input " << k << ", element " << j;
        }
        ASSERT_EQ(pith_grad_set(x[k], nullptr), PITH_OK);
    }
}

/* The same, with the node the generated table gives `overload`. */
inline void ExpectGradients(const Op &f, const std::vector<pith_tensor *> &x,
                            const char *overload)
{
    ExpectGradientsNamed(f, x, NodeNameOf(overload), overload);
}

inline std::vector<pith_tensor *> Raw(const std::vector<const Tensor *> &ts)
{
    std::vector<pith_tensor *> out;
    for (const Tensor *t : ts)
        out.push_back(t->get());
    return out;
}

/* The names of t's grad_fn and of the nodes behind it along each node's first edge, down
 * to the leaf's AccumulateGrad. */
inline std::vector<std::string> Chain(const pith_tensor *t)
{
    std::vector<std::string> out;
    pith_node *n = pith_grad_fn(t);
    while (n) {
        out.push_back(pith_node_name(n));
        pith_node *next = nullptr;
        int input_nr = 0;
        if (pith_node_num_next(n) > 0) {
            EXPECT_EQ(pith_node_next(n, 0, &next, &input_nr), PITH_OK);
        }
        pith_node_release(n);
        n = next;
    }
    return out;
}

struct StackDeleter {
    void operator()(pith_stack *s) const { pith_stack_free(s); }
};
using Stack = std::unique_ptr<pith_stack, StackDeleter>;

/* Calls the op `name` boxed with the arguments `push` puts on the stack; its results (new
 * references: one Tensor, or each of a Tensor[]), empty on error. */
inline std::vector<pith_tensor *> CallBoxed(const char *name,
                                            const std::function<void(pith_stack *)> &push)
{
    Stack s(pith_stack_new());
    push(s.get());
    if (pith_call_boxed(pith_op_find(name), s.get()) != PITH_OK)
        return {};
    if (pith_stack_kind(s.get(), 0) == PITH_VALUE_TENSOR)
        return {pith_stack_get_tensor(s.get(), 0)};
    size_t n = 0;
    pith_tensor *const *list = pith_stack_get_tensor_list(s.get(), 0, &n);
    std::vector<pith_tensor *> out(list, list + n);
    for (pith_tensor *t : out)
        pith_retain(t);
    return out;
}

/* The one Tensor result of a boxed call (NULL on error). */
inline pith_tensor *CallOne(const char *name, const std::function<void(pith_stack *)> &push)
{
    std::vector<pith_tensor *> r = CallBoxed(name, push);
    for (size_t i = 1; i < r.size(); i++)
        pith_release(r[i]);
    return r.empty() ? nullptr : r[0];
}

}  // namespace gradient_check

#endif /* PITH_TESTS_AUTOGRAD_GRADIENT_CHECK_H */
