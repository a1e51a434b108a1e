// composites_test.cc — composite implicit ops take their gradients from their parts (See
// Note [Composites call their parts through the dispatcher], kernels/ops_internal.h): each
// one's gradient against central differences in float64, the nodes its parts record
// (PyTorch's names), and the same tensor whether it records or not.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "gradient_check.h"
#include "live_nodes.h"

namespace {

using gradient_check::CallBoxed;
using gradient_check::CallOne;
using gradient_check::Chain;
using gradient_check::ExpectGradientsNamed;
using gradient_check::Raw;
using gradient_check::Sample;
using pith_test::Shape;
using pith_test::Tensor;
using pith_test::Values;

using Composites = LiveNodesFixture;

/* sum(pieces[0] * pieces[0]) + sum(pieces[last]): a loss that reads two pieces of a split,
 * so that a middle piece gets no gradient (the engine gives it zeros). */
pith_tensor *TwoPieces(std::vector<pith_tensor *> pieces)
{
    if (pieces.empty())
        return nullptr;
    pith_tensor *square = pith_mul(pieces[0], pieces[0]);
    pith_tensor *a = pith_sum(square, 0, nullptr, false);
    pith_tensor *b = pith_sum(pieces.back(), 0, nullptr, false);
    pith_tensor *out = pith_add(a, b);
    for (pith_tensor *t : {square, a, b})
        pith_release(t);
    for (pith_tensor *t : pieces)
        pith_release(t);
    return out;
}

std::vector<pith_tensor *> ListOf(pith_tensor **list, size_t n)
{
    std::vector<pith_tensor *> out(list, list + (list ? n : 0));
    free(list);  // the entries are moved into `out`
    return out;
}

// ---- contiguous, reshape, flatten ----

TEST_F(Composites, ContiguousOfAContiguousTensorIsItselfWithItsHistory)
{
    Tensor x = Sample({2, 3});
    Tensor y(pith_mul(x.get(), x.get()));
    Tensor c(pith_contiguous(y.get()));
    EXPECT_EQ(c.get(), y.get());
    EXPECT_EQ(Chain(c.get()), (std::vector<std::string>{"MulBackward0", "AccumulateGrad"}));
}

TEST_F(Composites, ContiguousOfATransposedTensorRecordsClone)
{
    Tensor x = Sample({3, 4});
    auto f = [](const auto &v) {
        Tensor t(pith_t(v[0]));
        return pith_contiguous(t.get());
    };
    Tensor y(f(Raw({&x})));
    EXPECT_EQ(Chain(y.get()),
              (std::vector<std::string>{"CloneBackward0", "TBackward0", "AccumulateGrad"}));
    y.reset();
    ExpectGradientsNamed(f, Raw({&x}), "CloneBackward0", "contiguous");
}

TEST_F(Composites, ReshapeThatCanViewRecordsView)
{
    Tensor x = Sample({3, 4});
    int64_t sizes[] = {2, -1};
    ExpectGradientsNamed([&](auto &v) { return pith_reshape(v[0], 2, sizes); }, Raw({&x}),
                         "ViewBackward0", "reshape");
}

TEST_F(Composites, ReshapeThatMustCopyRecordsCloneThenUnsafeView)
{
    Tensor x = Sample({3, 4});
    int64_t sizes[] = {12};
    auto f = [&](const auto &v) {
        Tensor t(pith_t(v[0]));
        return pith_reshape(t.get(), 1, sizes);
    };
    Tensor y(f(Raw({&x})));
    EXPECT_EQ(Chain(y.get()), (std::vector<std::string>{"UnsafeViewBackward0", "CloneBackward0",
                                                        "TBackward0", "AccumulateGrad"}));
    y.reset();
    ExpectGradientsNamed(f, Raw({&x}), "UnsafeViewBackward0", "reshape");
}

TEST_F(Composites, FlattenIsAReshape)
{
    Tensor x = Sample({2, 3, 4});
    ExpectGradientsNamed([](auto &v) { return pith_flatten(v[0], 1, 2); }, Raw({&x}),
                         "ViewBackward0", "flatten");
    ExpectGradientsNamed(
        [](auto &v) {
            Tensor t(pith_transpose(v[0], 0, 2));
            return pith_flatten(t.get(), 0, 1);
        },
        Raw({&x}), "UnsafeViewBackward0", "flatten");
    Tensor s = Sample({});
    ExpectGradientsNamed([](auto &v) { return pith_flatten(v[0], 0, -1); }, Raw({&s}),
                         "ViewBackward0", "flatten of a 0-dim tensor");
}

TEST_F(Composites, FlattenOfOneDimIsItself)
{
    Tensor x = Sample({2, 3});
    Tensor y(pith_flatten(x.get(), 1, 1));
    EXPECT_EQ(y.get(), x.get());
}

// ---- narrow, split.sizes, chunk ----

TEST_F(Composites, NarrowIsASlice)
{
    Tensor x = Sample({3, 5});
    ExpectGradientsNamed([](auto &v) { return pith_narrow(v[0], 1, -4, 2); }, Raw({&x}),
                         "SliceBackward0", "narrow");
}

using Pieces = std::function<std::vector<pith_tensor *>(pith_tensor *)>;

/* pieces(x) are `count` tensors of `shape`, each an output of a node named `node`; and
 * the gradient through two of them matches central differences. */
void ExpectPiecesOf(const Pieces &pieces, const Tensor &x, size_t count, const char *node,
                    Shape shape)
{
    std::vector<pith_tensor *> list = pieces(x.get());
    ASSERT_EQ(list.size(), count) << node << ": " << pith_last_error();
    for (pith_tensor *p : list) {
        EXPECT_STREQ(pith_grad_fn_name(p), node);
        EXPECT_EQ(pith_test::Sizes(p), shape);
        pith_release(p);
    }
    if (pith_numel(x.get()) > 0)
        ExpectGradientsNamed([&](auto &v) { return TwoPieces(pieces(v[0])); }, Raw({&x}),
                             "AddBackward0", node);
}

Pieces Chunks(int64_t chunks, int dim)
{
    return [=](pith_tensor *t) {
        size_t n = 0;
        pith_tensor **list = pith_chunk(t, chunks, dim, &n);
        return ListOf(list, n);
    };
}

TEST_F(Composites, SplitSizesIsSplitWithSizes)
{
    Tensor x = Sample({6, 2});
    auto pieces = [](pith_tensor *t) {
        int64_t sizes[] = {2, 2, 2};
        return CallBoxed("split.sizes", [&](pith_stack *s) {
            pith_stack_push_tensor(s, t);
            pith_stack_push_int_list(s, sizes, 3);
            pith_stack_push_int(s, 0);
        });
    };
    ExpectPiecesOf(pieces, x, 3, "SplitWithSizesBackward0", {2, 2});
}

TEST_F(Composites, ChunkIsASplit)
{
    Tensor x = Sample({2, 9});
    ExpectPiecesOf(Chunks(3, 1), x, 3, "SplitBackward0", {2, 3});
}

TEST_F(Composites, ChunkOfAnEmptyDimIsSplitWithSizes)
{
    Tensor x = Sample({0, 2});
    ExpectPiecesOf(Chunks(3, 0), x, 3, "SplitWithSizesBackward0", {0, 2});
}

// ---- broadcast_to, expand_as, broadcast_tensors ----

TEST_F(Composites, BroadcastToAndExpandAsAreExpand)
{
    Tensor x = Sample({3, 1});
    int64_t sizes[] = {2, 3, 4};
    ExpectGradientsNamed(
        [&](auto &v) {
            return CallOne("broadcast_to", [&](pith_stack *s) {
                pith_stack_push_tensor(s, v[0]);
                pith_stack_push_int_list(s, sizes, 3);
            });
        },
        Raw({&x}), "ExpandBackward0", "broadcast_to");
    Tensor like = Sample({2, 3, 4}, -1, 1, false);
    ExpectGradientsNamed(
        [&](auto &v) {
            return CallOne("expand_as", [&](pith_stack *s) {
                pith_stack_push_tensor(s, v[0]);
                pith_stack_push_tensor(s, like.get());
            });
        },
        Raw({&x}), "ExpandBackward0", "expand_as");
}

TEST_F(Composites, BroadcastTensorsExpandsWhatIsNotOfTheCommonShape)
{
    Tensor a = Sample({2, 3}), b = Sample({3});
    auto both = [](pith_tensor *x, pith_tensor *y) {
        const pith_tensor *list[] = {x, y};
        return CallBoxed("broadcast_tensors",
                         [&](pith_stack *s) { pith_stack_push_tensor_list(s, list, 2); });
    };
    std::vector<pith_tensor *> r = both(a.get(), b.get());
    ASSERT_EQ(r.size(), 2u) << pith_last_error();
    EXPECT_EQ(r[0], a.get());  // already of the common shape: itself, as in PyTorch
    EXPECT_STREQ(pith_grad_fn_name(r[1]), "ExpandBackward0");
    for (pith_tensor *t : r)
        pith_release(t);
    ExpectGradientsNamed(
        [&](auto &v) {
            std::vector<pith_tensor *> pair = both(v[0], v[1]);
            pith_tensor *out = pair.size() == 2 ? pith_mul(pair[0], pair[1]) : nullptr;
            for (pith_tensor *t : pair)
                pith_release(t);
            return out;
        },
        Raw({&a, &b}), "MulBackward0", "broadcast_tensors");
}

// ---- einsum, outer ----

pith_tensor *Einsum(const char *equation, const std::vector<pith_tensor *> &operands)
{
    std::vector<const pith_tensor *> ops(operands.begin(), operands.end());
    return pith_einsum(equation, ops.data(), ops.size());
}

TEST_F(Composites, EinsumOfAMatrixProductRecordsItsBmm)
{
    Tensor a = Sample({2, 3}), b = Sample({3, 4});
    ExpectGradientsNamed([](auto &v) { return Einsum("ij,jk->ik", v); }, Raw({&a, &b}),
                         "ViewBackward0", "einsum ij,jk->ik");
    Tensor y(Einsum("ij,jk->ik", Raw({&a, &b})));
    std::vector<std::string> chain = Chain(y.get());
    EXPECT_NE(std::find(chain.begin(), chain.end(), "BmmBackward0"), chain.end());
}

TEST_F(Composites, EinsumOfOneOperandIsAPermuteOrASum)
{
    Tensor x = Sample({2, 3});
    ExpectGradientsNamed([](auto &v) { return Einsum("ij->ji", v); }, Raw({&x}),
                         "PermuteBackward0", "einsum ij->ji");
    ExpectGradientsNamed([](auto &v) { return Einsum("ij->ij", v); }, Raw({&x}),
                         "PermuteBackward0", "einsum ij->ij");
    ExpectGradientsNamed([](auto &v) { return Einsum("ij->i", v); }, Raw({&x}), "SumBackward1",
                         "einsum ij->i");
}

TEST_F(Composites, EinsumOfADiagonalIsAsStrided)
{
    Tensor x = Sample({3, 3});
    ExpectGradientsNamed([](auto &v) { return Einsum("ii->i", v); }, Raw({&x}),
                         "AsStridedBackward0", "einsum ii->i");
    Tensor y = Sample({2, 3, 2});
    ExpectGradientsNamed([](auto &v) { return Einsum("iji->j", v); }, Raw({&y}), "SumBackward1",
                         "einsum iji->j");
}

TEST_F(Composites, EinsumOfAnOuterProductBroadcastsAMul)
{
    Tensor a = Sample({3}), b = Sample({1, 4});
    ExpectGradientsNamed([](auto &v) { return Einsum("i,jk->ijk", v); }, Raw({&a, &b}),
                         "ViewBackward0", "einsum i,jk->ijk");
}

TEST_F(Composites, OuterGivesBothVectorsTheirGradient)
{
    Tensor a = Sample({3}), b = Sample({4});
    ExpectGradientsNamed([](auto &v) { return pith_outer(v[0], v[1]); }, Raw({&a, &b}),
                         "MulBackward0", "outer");
}

// ---- the path that records and the one that does not make the same tensor ----

struct Geometry {
    Shape sizes, strides;
    int64_t offset;
    std::vector<double> values;
    bool operator==(const Geometry &o) const
    {
        return sizes == o.sizes && strides == o.strides && offset == o.offset &&
               values == o.values;
    }
};

Geometry GeometryOf(const pith_tensor *t)
{
    int64_t strides[PITH_MAX_DIMS];
    int n = pith_strides(t, strides);
    return {pith_test::Sizes(t), Shape(strides, strides + (n < 0 ? 0 : n)),
            pith_storage_offset(t), Values(t)};
}

/* f's results for x that requires grad (the composite records through its parts) and for
 * the same values without grad (it makes the views itself) have the same geometry. */
void ExpectSameTensors(const std::function<std::vector<pith_tensor *>(pith_tensor *)> &f,
                       Shape sizes, const char *what)
{
    Tensor recorded = Sample(sizes), plain = Sample(sizes, -1.5, 1.5, false);
    std::vector<pith_tensor *> a = f(recorded.get()), b = f(plain.get());
    ASSERT_EQ(a.size(), b.size()) << what;
    ASSERT_FALSE(a.empty()) << what << ": " << pith_last_error();
    for (size_t i = 0; i < a.size(); i++) {
        EXPECT_TRUE(pith_requires_grad(a[i])) << what;
        EXPECT_FALSE(pith_requires_grad(b[i])) << what;
        EXPECT_TRUE(GeometryOf(a[i]) == GeometryOf(b[i])) << what << ": result " << i;
    }
    for (pith_tensor *t : a)
        pith_release(t);
    for (pith_tensor *t : b)
        pith_release(t);
}

TEST_F(Composites, RecordingOrNotTheyMakeTheSameTensors)
{
    auto one = [](pith_tensor *t) { return std::vector<pith_tensor *>{t}; };
    int64_t flat[] = {-1}, three[] = {2, 2, 3};
    ExpectSameTensors([&](pith_tensor *x) { return one(pith_reshape(x, 3, three)); }, {3, 4},
                      "reshape (a view)");
    ExpectSameTensors(
        [&](pith_tensor *x) {
            Tensor t(pith_t(x));
            return one(pith_reshape(t.get(), 1, flat));
        },
        {3, 4}, "reshape (a copy)");
    ExpectSameTensors(
        [&](pith_tensor *x) {
            Tensor t(pith_t(x));
            return one(pith_contiguous(t.get()));
        },
        {3, 4}, "contiguous");
    ExpectSameTensors([&](pith_tensor *x) { return one(pith_flatten(x, 0, 1)); }, {2, 3, 2},
                      "flatten");
    ExpectSameTensors([&](pith_tensor *x) { return one(pith_narrow(x, 1, 1, 2)); }, {3, 4},
                      "narrow");
    ExpectSameTensors(Chunks(3, 1), {2, 5}, "chunk");
    ExpectSameTensors(
        [&](pith_tensor *x) {
            int64_t sizes[] = {3, 1};
            return CallBoxed("split.sizes", [&](pith_stack *s) {
                pith_stack_push_tensor(s, x);
                pith_stack_push_int_list(s, sizes, 2);
                pith_stack_push_int(s, 1);
            });
        },
        {2, 4}, "split.sizes");
    ExpectSameTensors(
        [&](pith_tensor *x) {
            int64_t sizes[] = {2, 3, 4};
            return CallBoxed("broadcast_to", [&](pith_stack *s) {
                pith_stack_push_tensor(s, x);
                pith_stack_push_int_list(s, sizes, 3);
            });
        },
        {3, 1}, "broadcast_to");
    ExpectSameTensors(
        [&](pith_tensor *x) {
            Tensor other = Sample({2, 1, 4}, -1, 1, false);
            const pith_tensor *list[] = {x, other.get()};
            std::vector<pith_tensor *> r = CallBoxed("broadcast_tensors", [&](pith_stack *s) {
                pith_stack_push_tensor_list(s, list, 2);
            });
            if (r.size() == 2)  // the other's expansion does not require grad either way
                pith_release(r[1]);
            r.resize(r.empty() ? 0 : 1);
            return r;
        },
        {3, 1}, "broadcast_tensors");
    for (const char *equation : {"ij->ji", "ii->i", "ij->i", "ij,jk->ik", "ij,kj->ikj"}) {
        ExpectSameTensors(
            [&](pith_tensor *x) {
                std::vector<pith_tensor *> ops = {x};
                if (std::string(equation).find(',') != std::string::npos)
                    ops.push_back(x);
                return one(Einsum(equation, ops));
            },
            {3, 3}, equation);
    }
}

// ---- their results are views as their parts' are (Note [Views and in-place]) ----

TEST_F(Composites, AReshapeMadeInNoGradCannotBeWrittenWithGradOn)
{
    Tensor x = Sample({3, 4}), w = Sample({12}, -1, 1, false);
    Tensor y(pith_mul(x.get(), x.get()));
    int64_t sizes[] = {12};
    pith_set_grad_enabled(false);
    Tensor v(pith_reshape(y.get(), 1, sizes));
    pith_set_grad_enabled(true);
    ASSERT_TRUE(v) << pith_last_error();
    EXPECT_EQ(pith_mul_(v.get(), w.get()), PITH_ERR_RUNTIME);
    EXPECT_TRUE(pith_test::HasError(PITH_ERR_RUNTIME, "A view was created in no_grad mode"));
}

TEST_F(Composites, AnInPlaceWriteThroughANarrowReachesTheBase)
{
    Tensor x = Sample({3, 4}), w = Sample({3, 2}, 0.5, 2);
    ExpectGradientsNamed(
        [&](const auto &v) {
            pith_tensor *y = pith_mul(v[0], v[0]);
            Tensor part(pith_narrow(y, 1, 1, 2));
            if (!part || pith_mul_(part.get(), w.get()) != PITH_OK) {
                pith_release(y);
                return (pith_tensor *)nullptr;
            }
            return y;
        },
        Raw({&x}), "CopySlices", "narrow then mul_");
}

TEST_F(Composites, WithGradOffAReshapeRecordsNothingAndStaysAView)
{
    Tensor x = Sample({3, 4});
    int64_t sizes[] = {12};
    pith_set_grad_enabled(false);
    Tensor y(pith_reshape(x.get(), 1, sizes));
    pith_set_grad_enabled(true);
    ASSERT_TRUE(y) << pith_last_error();
    EXPECT_EQ(pith_grad_fn_name(y.get()), nullptr);
    EXPECT_FALSE(pith_requires_grad(y.get()));
    EXPECT_EQ(pith_data_ptr(y.get()), pith_data_ptr(x.get()));
}

}  // namespace
