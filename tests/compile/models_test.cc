// models_test.cc — whole models as compiled graphs, equal bitwise to the same calls made
// eagerly through pith_call_boxed: an MLP (784-512-512-10) and a pre-norm transformer block
// (d=256, seq=64, 4 heads); and one compiled MLP run from 4 threads at once.
//
// Each model is written once, against a Builder that either calls the ops eagerly on real
// tensors or records them with pith_graph_call on stand-ins, so both runs are the same
// sequence of calls with the same arguments.
#include <initializer_list>
#include <map>
#include <thread>

#include "eager_oracle.h"

namespace {

using eager_oracle::BitwiseMismatch;
using eager_oracle::Compiled;
using eager_oracle::CompiledDump;
using eager_oracle::Graph;
using eager_oracle::Rng;
using eager_oracle::Stack;
using eager_oracle::Tensor;
using eager_oracle::UniformFloat32;

// One boxed argument: a tensor (borrowed), a number, None, or a list of ints.
struct Arg {
    enum Kind { TENSOR, INT, DOUBLE, NONE, INT_LIST } kind;
    const pith_tensor *t = nullptr;
    int64_t i = 0;
    double d = 0;
    std::vector<int64_t> list;
    Arg(const pith_tensor *tensor) : kind(TENSOR), t(tensor) {}
    Arg(const Tensor &tensor) : kind(TENSOR), t(tensor.get()) {}
    Arg(int v) : kind(INT), i(v) {}
    Arg(int64_t v) : kind(INT), i(v) {}
    Arg(double v) : kind(DOUBLE), d(v) {}
    Arg(std::nullptr_t) : kind(NONE) {}
    Arg(std::initializer_list<int64_t> l) : kind(INT_LIST), list(l) {}
};

// Calls ops eagerly (graph NULL) or records them in a graph, in the boxed convention.
class Builder {
public:
    explicit Builder(pith_graph *graph) : graph_(graph) {}

    // The tensor results of one call (a tensor list counts as its elements).
    std::vector<Tensor> CallAll(const char *name, const std::vector<Arg> &args)
    {
        std::vector<Tensor> out;
        const pith_op *op = pith_op_find(name);
        EXPECT_NE(op, nullptr) << name;
        if (!op)
            return out;
        Stack s(pith_stack_new());
        for (const Arg &a : args) {
            switch (a.kind) {
            case Arg::TENSOR: pith_stack_push_tensor(s.get(), a.t); break;
            case Arg::INT: pith_stack_push_int(s.get(), a.i); break;
            case Arg::DOUBLE: pith_stack_push_double(s.get(), a.d); break;
            case Arg::NONE: pith_stack_push_none(s.get()); break;
            case Arg::INT_LIST: pith_stack_push_int_list(s.get(), a.list.data(), a.list.size()); break;
            }
        }
        pith_status status = graph_ ? pith_graph_call(graph_, op, s.get())
                                    : pith_call_boxed(op, s.get());
        EXPECT_EQ(status, PITH_OK) << name << (graph_ ? " (graph): " : " (eager): ")
                                   << pith_last_error();
        if (status != PITH_OK)
            return out;
        for (size_t k = 0; k < pith_stack_size(s.get()); k++) {
            if (pith_stack_kind(s.get(), k) == PITH_VALUE_TENSOR_LIST) {
                size_t n = 0;
                pith_tensor *const *list = pith_stack_get_tensor_list(s.get(), k, &n);
                for (size_t j = 0; j < n; j++) {
                    pith_retain(list[j]);
                    out.emplace_back(list[j]);
                }
            } else {
                out.emplace_back(pith_stack_get_tensor(s.get(), k));
            }
        }
        return out;
    }

    Tensor Call(const char *name, const std::vector<Arg> &args)
    {
        std::vector<Tensor> out = CallAll(name, args);
        EXPECT_EQ(out.size(), 1u) << name;
        return out.empty() ? Tensor() : std::move(out[0]);
    }

    // The tensor itself (eager) or its stand-in, made once per tensor (graph); borrowed.
    const pith_tensor *Param(const Tensor &t)
    {
        if (!graph_)
            return t.get();
        Tensor &standin = params_[t.get()];
        if (!standin) {
            standin.reset(pith_graph_param(graph_, t.get()));
            EXPECT_TRUE(standin) << pith_last_error();
        }
        return standin.get();
    }

private:
    pith_graph *graph_;
    std::map<const pith_tensor *, Tensor> params_;
};

// ---- the models ----------------------------------------------------------------------------

struct Linear {
    Tensor weight, bias;
    Linear(int64_t in, int64_t out, Rng &rng)
        : weight(UniformFloat32({out, in}, 1.0 / std::sqrt((double)in), rng)),
          bias(UniformFloat32({out}, 1.0 / std::sqrt((double)in), rng))
    {
    }
    Tensor operator()(Builder &b, const pith_tensor *x) const
    {
        return b.Call("linear", {x, b.Param(weight), b.Param(bias)});
    }
};

struct Mlp {
    Linear l1, l2, l3;
    explicit Mlp(Rng &rng) : l1(784, 512, rng), l2(512, 512, rng), l3(512, 10, rng) {}
    Tensor operator()(Builder &b, const pith_tensor *x) const
    {
        Tensor h = b.Call("relu", {l1(b, x)});
        h = b.Call("relu", {l2(b, h.get())});
        return l3(b, h.get());
    }
};

constexpr int64_t kModel = 256, kSeq = 64, kHeads = 4, kHeadDim = kModel / kHeads;

struct LayerNorm {
    Tensor weight, bias;
    explicit LayerNorm(Rng &rng)
        : weight(UniformFloat32({kModel}, 1.0, rng)), bias(UniformFloat32({kModel}, 0.5, rng))
    {
    }
    Tensor operator()(Builder &b, const pith_tensor *x) const
    {
        return b.Call("layer_norm", {x, {kModel}, b.Param(weight), b.Param(bias), 1e-5});
    }
};

// Pre-norm: x + attention(ln1(x)), then that + mlp(ln2(that)).
struct TransformerBlock {
    LayerNorm ln1, ln2;
    Linear qkv, out, up, down;
    Tensor scale;  // 1/sqrt(head dim), as a 0-dim float64 tensor (a number)
    explicit TransformerBlock(Rng &rng)
        : ln1(rng), ln2(rng), qkv(kModel, 3 * kModel, rng), out(kModel, kModel, rng),
          up(kModel, 4 * kModel, rng), down(4 * kModel, kModel, rng),
          scale(pith_scalar_tensor(1.0 / std::sqrt((double)kHeadDim), PITH_FLOAT64))
    {
    }
    // (batch, seq, model) -> (batch, heads, seq, head dim)
    static Tensor Heads(Builder &b, const pith_tensor *x, int64_t batch)
    {
        Tensor v = b.Call("view", {x, {batch, kSeq, kHeads, kHeadDim}});
        return b.Call("transpose.int", {v, 1, 2});
    }
    Tensor operator()(Builder &b, const pith_tensor *x, int64_t batch) const
    {
        Tensor h = ln1(b, x);
        Tensor packed = qkv(b, h.get());
        std::vector<Tensor> qkv_parts = b.CallAll("split.Tensor", {packed, kModel, -1});
        EXPECT_EQ(qkv_parts.size(), 3u);
        if (qkv_parts.size() != 3)
            return Tensor();
        Tensor q = Heads(b, qkv_parts[0].get(), batch);
        Tensor k = Heads(b, qkv_parts[1].get(), batch);
        Tensor v = Heads(b, qkv_parts[2].get(), batch);
        Tensor kt = b.Call("transpose.int", {k, -2, -1});
        Tensor scores = b.Call("matmul", {q, kt});
        scores = b.Call("mul.Tensor", {scores, b.Param(scale)});
        Tensor attn = b.Call("softmax.int", {scores, -1});
        Tensor ctx = b.Call("matmul", {attn, v});
        ctx = b.Call("transpose.int", {ctx, 1, 2});
        ctx = b.Call("reshape", {ctx, {batch, kSeq, kModel}});
        Tensor x1 = b.Call("add.Tensor", {x, out(b, ctx.get())});
        Tensor h2 = ln2(b, x1.get());
        Tensor f = b.Call("gelu", {up(b, h2.get())});
        return b.Call("add.Tensor", {x1, down(b, f.get())});
    }
};

// ---- running them ----------------------------------------------------------------------------

// A model as a compiled graph of one float32 input.
struct CompiledModel {
    Graph graph;
    Compiled compiled;
    std::string dump;
};

template <class Model>
CompiledModel CompileModel(const Model &forward, const std::vector<int64_t> &input_sizes)
{
    CompiledModel m;
    m.graph.reset(pith_graph_new());
    Tensor x(pith_graph_input(m.graph.get(), PITH_FLOAT32, (int)input_sizes.size(),
                              input_sizes.data(), nullptr));
    EXPECT_TRUE(x) << pith_last_error();
    {
        Builder b(m.graph.get());
        Tensor y = forward(b, x.get());
        EXPECT_TRUE(y);
        if (!y)
            return m;
        EXPECT_EQ(pith_graph_output(m.graph.get(), y.get()), PITH_OK) << pith_last_error();
    }
    m.compiled.reset(pith_graph_compile(m.graph.get(), nullptr));
    EXPECT_TRUE(m.compiled) << pith_last_error() << "\n" << eager_oracle::GraphDump(m.graph.get());
    if (m.compiled)
        m.dump = CompiledDump(m.compiled.get());
    return m;
}

Tensor RunCompiled(pith_compiled *c, const pith_tensor *x)
{
    pith_tensor *in = const_cast<pith_tensor *>(x);
    pith_tensor *out = nullptr;
    pith_status s = pith_compiled_run(c, &in, 1, &out, 1);
    EXPECT_EQ(s, PITH_OK) << pith_last_error();
    return Tensor(out);
}

template <class Model>
Tensor RunEager(const Model &forward, const pith_tensor *x)
{
    Builder b(nullptr);
    return forward(b, x);
}

// Compiles `forward` for inputs of `sizes`, runs it twice on one seeded input, and
// compares both runs with eager.
template <class Model>
void ExpectCompiledMatchesEager(const Model &forward, const std::vector<int64_t> &sizes)
{
    Rng rng(7 + (uint64_t)sizes[0]);
    Tensor x = UniformFloat32(sizes, 2.0, rng);
    Tensor expected = RunEager(forward, x.get());
    ASSERT_TRUE(expected);
    CompiledModel m = CompileModel(forward, sizes);
    ASSERT_TRUE(m.compiled);
    for (int run = 1; run <= 2; run++) {
        Tensor got = RunCompiled(m.compiled.get(), x.get());
        EXPECT_EQ(BitwiseMismatch(expected.get(), got.get()), "")
            << "run " << run << "\n" << m.dump;
    }
}

class CompiledModels : public eager_oracle::LiveTensorTest {};

TEST_F(CompiledModels, MlpBatch1MatchesEagerBitwise)
{
    Rng rng(1);
    Mlp mlp(rng);
    ExpectCompiledMatchesEager([&](Builder &b, const pith_tensor *x) { return mlp(b, x); },
                               {1, 784});
}

TEST_F(CompiledModels, MlpBatch32MatchesEagerBitwise)
{
    Rng rng(1);
    Mlp mlp(rng);
    ExpectCompiledMatchesEager([&](Builder &b, const pith_tensor *x) { return mlp(b, x); },
                               {32, 784});
}

TEST_F(CompiledModels, TransformerBlockBatch1MatchesEagerBitwise)
{
    Rng rng(2);
    TransformerBlock block(rng);
    ExpectCompiledMatchesEager(
        [&](Builder &b, const pith_tensor *x) { return block(b, x, 1); }, {1, kSeq, kModel});
}

TEST_F(CompiledModels, TransformerBlockBatch2MatchesEagerBitwise)
{
    Rng rng(2);
    TransformerBlock block(rng);
    ExpectCompiledMatchesEager(
        [&](Builder &b, const pith_tensor *x) { return block(b, x, 2); }, {2, kSeq, kModel});
}

// A param is held by reference: a run reads its data as it is then.
TEST_F(CompiledModels, MlpRunReadsTheParamsAsTheyAreAtEachRun)
{
    Rng rng(4);
    Mlp mlp(rng);
    auto forward = [&](Builder &b, const pith_tensor *x) { return mlp(b, x); };
    const std::vector<int64_t> sizes = {2, 784};
    Tensor x = UniformFloat32(sizes, 2.0, rng);
    CompiledModel m = CompileModel(forward, sizes);
    ASSERT_TRUE(m.compiled);
    Tensor before = RunCompiled(m.compiled.get(), x.get());
    Tensor half(pith_scalar_tensor(0.5, PITH_FLOAT32));
    ASSERT_EQ(pith_mul_(mlp.l3.weight.get(), half.get()), PITH_OK);
    ASSERT_EQ(pith_add_(mlp.l1.bias.get(), half.get()), PITH_OK);
    Tensor expected = RunEager(forward, x.get());
    Tensor after = RunCompiled(m.compiled.get(), x.get());
    EXPECT_EQ(BitwiseMismatch(expected.get(), after.get()), "");
    EXPECT_NE(BitwiseMismatch(expected.get(), before.get()), "");
}

// Runs of one compiled graph from several threads take arenas of their own: each thread's
// results are its own input's, every time. (Named for scripts/test.sh's TSan run, which
// runs the tests matching Concurrency.)
using CompiledModelConcurrency = CompiledModels;

TEST_F(CompiledModelConcurrency, MlpRunFromFourThreadsAtOnceMatchesEager)
{
    constexpr int kThreads = 4, kRuns = 50;
    const std::vector<int64_t> sizes = {4, 784};
    Rng rng(3);
    Mlp mlp(rng);
    auto forward = [&](Builder &b, const pith_tensor *x) { return mlp(b, x); };
    std::vector<Tensor> inputs, expected;
    for (int k = 0; k < kThreads; k++) {
        inputs.push_back(UniformFloat32(sizes, 2.0, rng));
        expected.push_back(RunEager(forward, inputs.back().get()));
        ASSERT_TRUE(expected.back());
    }
    CompiledModel m = CompileModel(forward, sizes);
    ASSERT_TRUE(m.compiled);
    std::vector<int> mismatches(kThreads, 0), failures(kThreads, 0);
    std::vector<std::string> first_error(kThreads);
    std::vector<std::thread> threads;
    for (int k = 0; k < kThreads; k++) {
        threads.emplace_back([&, k] {
            for (int run = 0; run < kRuns; run++) {
                pith_tensor *in = inputs[(size_t)k].get();
                pith_tensor *out = nullptr;
                if (pith_compiled_run(m.compiled.get(), &in, 1, &out, 1) != PITH_OK) {
                    if (failures[(size_t)k]++ == 0)
                        first_error[(size_t)k] = pith_last_error();
                    continue;
                }
                Tensor got(out);
                std::string mismatch = BitwiseMismatch(expected[(size_t)k].get(), got.get());
                if (!mismatch.empty() && mismatches[(size_t)k]++ == 0)
                    first_error[(size_t)k] = mismatch;
            }
        });
    }
    for (std::thread &t : threads)
        t.join();
    for (int k = 0; k < kThreads; k++) {
        EXPECT_EQ(failures[(size_t)k], 0) << "thread " << k << ": " << first_error[(size_t)k];
        EXPECT_EQ(mismatches[(size_t)k], 0) << "thread " << k << ": " << first_error[(size_t)k];
    }
}

}  // namespace
