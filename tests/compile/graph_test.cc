// graph_test.cc — the compiled-graph API (pith/graph.h): building over stand-ins, the
// errors of every entry point, the passes (DCE, CSE, effects, views, the arena) checked
// through the dumps, and runs compared bitwise with eager.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include "common/pith_test.h"
#include "pith/interpreter.h"
#include "pith/pith.h"

namespace {

using pith_test::HasError;
using pith_test::Shape;
using pith_test::Tensor;

// A 0-dim wrapped number, as Python's `x * 0.5` passes one.
pith_tensor *WrappedNumber(double value, pith_dtype dtype)
{
    pith_tensor *t = pith_full(0, nullptr, value, dtype);
    pith_tensor_set_wrapped_number(t, true);
    return t;
}

// One argument of a boxed call.
struct Arg {
    enum Kind { TENSOR, INT, DOUBLE, BOOL, NONE, INTS, TENSORS, STR, GEN } kind = NONE;
    const pith_tensor *t = nullptr;
    int64_t i = 0;
    double d = 0;
    std::vector<int64_t> ints;
    std::vector<const pith_tensor *> ts;
    std::string s;
    pith_generator *gen = nullptr;
};
Arg T(const pith_tensor *t) { Arg a; a.kind = Arg::TENSOR; a.t = t; return a; }
Arg T(const Tensor &t) { return T(t.get()); }
Arg I(int64_t i) { Arg a; a.kind = Arg::INT; a.i = i; return a; }
Arg D(double d) { Arg a; a.kind = Arg::DOUBLE; a.d = d; return a; }
Arg B(bool b) { Arg a; a.kind = Arg::BOOL; a.i = b; return a; }
[[maybe_unused]] Arg None() { Arg a; a.kind = Arg::NONE; return a; }
Arg Ints(std::vector<int64_t> v) { Arg a; a.kind = Arg::INTS; a.ints = std::move(v); return a; }
Arg Str(const char *s) { Arg a; a.kind = Arg::STR; a.s = s; return a; }
Arg Gen(pith_generator *g) { Arg a; a.kind = Arg::GEN; a.gen = g; return a; }

struct StackDeleter {
    void operator()(pith_stack *s) const { pith_stack_free(s); }
};
using Stack = std::unique_ptr<pith_stack, StackDeleter>;

Stack Push(const std::vector<Arg> &args)
{
    Stack s(pith_stack_new());
    for (const Arg &a : args) {
        pith_status st = PITH_OK;
        switch (a.kind) {
        case Arg::TENSOR: st = pith_stack_push_tensor(s.get(), a.t); break;
        case Arg::INT: st = pith_stack_push_int(s.get(), a.i); break;
        case Arg::DOUBLE: st = pith_stack_push_double(s.get(), a.d); break;
        case Arg::BOOL: st = pith_stack_push_bool(s.get(), a.i != 0); break;
        case Arg::NONE: st = pith_stack_push_none(s.get()); break;
        case Arg::INTS: st = pith_stack_push_int_list(s.get(), a.ints.data(), a.ints.size()); break;
        case Arg::TENSORS: st = pith_stack_push_tensor_list(s.get(), a.ts.data(), a.ts.size()); break;
        case Arg::STR: st = pith_stack_push_string(s.get(), a.s.c_str()); break;
        case Arg::GEN: st = pith_stack_push_generator(s.get(), a.gen); break;
        }
        EXPECT_EQ(st, PITH_OK) << pith_last_error();
    }
    return s;
}

std::vector<Tensor> Results(const pith_stack *s)
{
    std::vector<Tensor> out;
    for (size_t i = 0; i < pith_stack_size(s); i++)
        if (pith_stack_kind(s, i) == PITH_VALUE_TENSOR)
            out.emplace_back(pith_stack_get_tensor(s, i));
        else if (pith_stack_kind(s, i) == PITH_VALUE_TENSOR_LIST) {
            size_t n = 0;
            pith_tensor *const *ts = pith_stack_get_tensor_list(s, i, &n);
            for (size_t j = 0; j < n; j++) {
                pith_retain(ts[j]);
                out.emplace_back(ts[j]);
            }
        }
    return out;
}

const pith_op *Op(const char *name)
{
    const pith_op *op = pith_op_find(name);
    EXPECT_NE(op, nullptr) << name;
    return op;
}

// The op run eagerly.
std::vector<Tensor> Eager(const char *op, const std::vector<Arg> &args)
{
    Stack s = Push(args);
    EXPECT_EQ(pith_call_boxed(Op(op), s.get()), PITH_OK) << op << ": " << pith_last_error();
    return Results(s.get());
}
Tensor Eager1(const char *op, const std::vector<Arg> &args)
{
    std::vector<Tensor> r = Eager(op, args);
    return r.empty() ? Tensor() : std::move(r[0]);
}

struct GraphDeleter {
    void operator()(pith_graph *g) const { pith_graph_free(g); }
};
struct CompiledDeleter {
    void operator()(pith_compiled *c) const { pith_compiled_free(c); }
};
using Graph = std::unique_ptr<pith_graph, GraphDeleter>;
using Compiled = std::unique_ptr<pith_compiled, CompiledDeleter>;

std::vector<Tensor> Call(pith_graph *g, const char *op, const std::vector<Arg> &args)
{
    Stack s = Push(args);
    EXPECT_EQ(pith_graph_call(g, Op(op), s.get()), PITH_OK) << op << ": " << pith_last_error();
    return Results(s.get());
}
Tensor Call1(pith_graph *g, const char *op, const std::vector<Arg> &args)
{
    std::vector<Tensor> r = Call(g, op, args);
    return r.empty() ? Tensor() : std::move(r[0]);
}

Tensor Input(pith_graph *g, pith_dtype dtype, Shape sizes, const int64_t *strides = nullptr)
{
    Tensor t(pith_graph_input(g, dtype, (int)sizes.size(), sizes.data(), strides));
    EXPECT_NE(t, nullptr) << pith_last_error();
    return t;
}

std::string Dump(const pith_compiled *c)
{
    char *s = pith_compiled_dump(c);
    EXPECT_NE(s, nullptr) << pith_last_error();
    std::string out = s ? s : "";
    pith_string_free(s);
    return out;
}
std::string Dump(const pith_graph *g)
{
    char *s = pith_graph_dump(g);
    EXPECT_NE(s, nullptr) << pith_last_error();
    std::string out = s ? s : "";
    pith_string_free(s);
    return out;
}

size_t Count(const std::string &text, const std::string &what)
{
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        n++;
    return n;
}

Tensor Random(Shape sizes, pith_dtype dtype, uint64_t seed)
{
    pith_generator *gen = pith_generator_new(seed);
    Stack s = Push({Ints(sizes), Gen(gen)});
    pith_stack_push_dtype(s.get(), PITH_FLOAT64);
    EXPECT_EQ(pith_call_boxed(Op("randn"), s.get()), PITH_OK) << pith_last_error();
    pith_generator_release(gen);
    Tensor r(pith_stack_get_tensor(s.get(), 0));
    return Tensor(pith_to_dtype(r.get(), dtype));
}

// Same dtype, sizes and bytes (of the contiguous copies).
::testing::AssertionResult BitEqual(const pith_tensor *a, const pith_tensor *b)
{
    if (!a || !b)
        return ::testing::AssertionFailure() << "a NULL tensor";
    if (pith_tensor_dtype(a) != pith_tensor_dtype(b))
        return ::testing::AssertionFailure() << "dtypes differ";
    if (pith_test::Sizes(a) != pith_test::Sizes(b))
        return ::testing::AssertionFailure() << "sizes differ";
    Tensor ca(pith_contiguous(a)), cb(pith_contiguous(b));
    size_t n = (size_t)pith_numel(a) * pith_dtype_size(pith_tensor_dtype(a));
    if (n && std::memcmp(pith_data_ptr(ca.get()), pith_data_ptr(cb.get()), n) != 0)
        return ::testing::AssertionFailure() << "bytes differ";
    return ::testing::AssertionSuccess();
}

std::vector<Tensor> RunGraph(pith_compiled *c, const std::vector<const pith_tensor *> &inputs,
                        int noutputs)
{
    std::vector<pith_tensor *> outs((size_t)noutputs, nullptr);
    std::vector<pith_tensor *> ins;
    for (const pith_tensor *t : inputs)
        ins.push_back(const_cast<pith_tensor *>(t));
    EXPECT_EQ(pith_compiled_run(c, ins.data(), (int)ins.size(), outs.data(), noutputs), PITH_OK)
        << pith_last_error();
    std::vector<Tensor> r;
    for (pith_tensor *t : outs)
        r.emplace_back(t);
    return r;
}

class CompileTest : public pith_test::LiveTensorFixture {};

// ---- building and running ----

TEST_F(CompileTest, AChainMatchesEagerBitwise)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {4, 5});
    Tensor w = Input(g.get(), PITH_FLOAT32, {5});
    Tensor half(WrappedNumber(0.5, PITH_FLOAT64));
    Tensor y = Call1(g.get(), "mul.Tensor", {T(x), T(w)});
    Tensor z = Call1(g.get(), "add.Tensor", {T(y), T(half), D(2.0)});
    Tensor e = Call1(g.get(), "exp", {T(z)});
    Tensor s = Call1(g.get(), "sum.dim_IntList", {T(e), Ints({1}), B(true)});
    ASSERT_EQ(pith_graph_output(g.get(), s.get()), PITH_OK);
    EXPECT_EQ(pith_tensor_device(s.get()), PITH_META);
    EXPECT_EQ(pith_test::Sizes(s.get()), (Shape{4, 1}));
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    EXPECT_EQ(pith_compiled_num_inputs(c.get()), 2);
    EXPECT_EQ(pith_compiled_num_outputs(c.get()), 1);

    Tensor rx = Random({4, 5}, PITH_FLOAT32, 1), rw = Random({5}, PITH_FLOAT32, 2);
    Tensor ey = Eager1("mul.Tensor", {T(rx), T(rw)});
    Tensor ez = Eager1("add.Tensor", {T(ey), T(half), D(2.0)});
    Tensor ee = Eager1("exp", {T(ez)});
    Tensor es = Eager1("sum.dim_IntList", {T(ee), Ints({1}), B(true)});
    for (int run = 0; run < 3; run++) {
        std::vector<Tensor> out = RunGraph(c.get(), {rx.get(), rw.get()}, 1);
        EXPECT_TRUE(BitEqual(out[0].get(), es.get())) << "run " << run;
        EXPECT_EQ(pith_tensor_device(out[0].get()), PITH_CPU);
    }
}

TEST_F(CompileTest, TheGraphMayBeFreedBeforeItsCompiledForm)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT64, {3});
    Tensor y = Call1(g.get(), "neg", {T(x)});
    ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr);
    g.reset();
    x.reset();
    y.reset();
    Tensor rx = Random({3}, PITH_FLOAT64, 3);
    std::vector<Tensor> out = RunGraph(c.get(), {rx.get()}, 1);
    EXPECT_TRUE(BitEqual(out[0].get(), Eager1("neg", {T(rx)}).get()));
}

TEST_F(CompileTest, ARunAllocatesOnlyItsOutputs)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {64, 64});
    Tensor a = Call1(g.get(), "exp", {T(x)});
    Tensor b = Call1(g.get(), "mul.Tensor", {T(a), T(x)});
    Tensor t = Call1(g.get(), "transpose.int", {T(b), I(0), I(1)});
    Tensor m = Call1(g.get(), "mm", {T(t), T(a)});
    Tensor r = Call1(g.get(), "relu", {T(m)});
    ASSERT_EQ(pith_graph_output(g.get(), r.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    std::string dump = Dump(c.get());
    EXPECT_EQ(Count(dump, ": call "), 0u) << dump; // every step writes a planned buffer
    Tensor rx = Random({64, 64}, PITH_FLOAT32, 4);
    RunGraph(c.get(), {rx.get()}, 1); // warm
    size_t before = pith_live_tensors();
    pith_tensor *out = nullptr;
    pith_tensor *in = rx.get();
    ASSERT_EQ(pith_compiled_run(c.get(), &in, 1, &out, 1), PITH_OK) << pith_last_error();
    EXPECT_EQ(pith_live_tensors(), before + 1);
    pith_release(out);
}

// ---- stand-ins and what the stack may hold ----

TEST_F(CompileTest, AStandInOfAnotherGraphIsAnError)
{
    Graph g1(pith_graph_new()), g2(pith_graph_new());
    Tensor x1 = Input(g1.get(), PITH_FLOAT32, {2});
    Tensor x2 = Input(g2.get(), PITH_FLOAT32, {2});
    Stack s = Push({T(x1), T(x2)});
    EXPECT_EQ(pith_graph_call(g2.get(), Op("add.Tensor"), s.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "a stand-in of another graph"));
    EXPECT_EQ(pith_stack_size(s.get()), 2u); // the stack is as it was
    EXPECT_EQ(pith_graph_output(g2.get(), x1.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "another graph"));
}

TEST_F(CompileTest, AStandInOfAFreedGraphIsAnError)
{
    Graph g1(pith_graph_new());
    Tensor x1 = Input(g1.get(), PITH_FLOAT32, {2});
    g1.reset();
    // A new graph may reuse the freed one's memory: the serial still tells them apart.
    Graph g2(pith_graph_new());
    Tensor x2 = Input(g2.get(), PITH_FLOAT32, {2});
    Stack s = Push({T(x2), T(x1)});
    EXPECT_EQ(pith_graph_call(g2.get(), Op("mul.Tensor"), s.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "a freed graph"));
}

TEST_F(CompileTest, ATensorWithDataMustBeAParam)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {2});
    Shape sz{2};
    Tensor data(pith_ones(1, sz.data(), PITH_FLOAT32));
    Stack s = Push({T(x), T(data)});
    EXPECT_EQ(pith_graph_call(g.get(), Op("add.Tensor"), s.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "pith_graph_param"));
    // A plain Meta tensor is not a stand-in either.
    Tensor meta(pith_empty_strided(1, sz.data(), nullptr, PITH_FLOAT32, PITH_META));
    Stack s2 = Push({T(x), T(meta)});
    EXPECT_EQ(pith_graph_call(g.get(), Op("add.Tensor"), s2.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "not a stand-in of this graph"));
    // Made from a stand-in, but outside the graph.
    Tensor outside(pith_neg(x.get()));
    ASSERT_NE(outside, nullptr) << pith_last_error();
    Stack s3 = Push({T(x), T(outside)});
    EXPECT_EQ(pith_graph_call(g.get(), Op("add.Tensor"), s3.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "not a stand-in of this graph"));
}

TEST_F(CompileTest, AParamIsReadAtEveryRun)
{
    Shape sz{3};
    double init[3] = {1, 2, 3};
    Tensor w(pith_from_data(init, 1, sz.data(), PITH_FLOAT64));
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT64, {3});
    Tensor pw(pith_graph_param(g.get(), w.get()));
    ASSERT_NE(pw, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(pw.get()), PITH_META);
    Tensor y = Call1(g.get(), "mul.Tensor", {T(x), T(pw)});
    ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr);
    Tensor ones(pith_ones(1, sz.data(), PITH_FLOAT64));
    EXPECT_EQ(pith_test::Values(RunGraph(c.get(), {ones.get()}, 1)[0].get()),
              (std::vector<double>{1, 2, 3}));
    ASSERT_EQ(pith_mul_(w.get(), w.get()), PITH_OK);
    EXPECT_EQ(pith_test::Values(RunGraph(c.get(), {ones.get()}, 1)[0].get()),
              (std::vector<double>{1, 4, 9}));
    // Params need data.
    Tensor standin(pith_graph_param(g.get(), x.get()));
    EXPECT_EQ(standin, nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "stand-in"));
}

TEST_F(CompileTest, AWrappedNumberIsAConstantTakenByValue)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {3});
    Tensor k(WrappedNumber(3.0, PITH_FLOAT64));
    Tensor y = Call1(g.get(), "mul.Tensor", {T(x), T(k)});
    ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
    EXPECT_EQ(pith_tensor_dtype(y.get()), PITH_FLOAT32); // weak promotion
    // The constant was copied: changing the caller's tensor changes nothing.
    *(double *)pith_data_ptr(k.get()) = 100.0;
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr);
    Shape sz{3};
    Tensor ones(pith_ones(1, sz.data(), PITH_FLOAT32));
    EXPECT_EQ(pith_test::Values(RunGraph(c.get(), {ones.get()}, 1)[0].get()),
              (std::vector<double>{3, 3, 3}));
    EXPECT_NE(Dump(g.get()).find("const float64 3"), std::string::npos) << Dump(g.get());
    // A constant cannot be written.
    Stack s = Push({T(k), T(x)});
    EXPECT_EQ(pith_graph_call(g.get(), Op("add_.Tensor"), s.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "constant"));
}

TEST_F(CompileTest, FactoriesMakeStandInsAndRunOnCpu)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {2, 3});
    Tensor ones = Call1(g.get(), "ones", {Ints({2, 3})});
    ASSERT_NE(ones, nullptr);
    EXPECT_EQ(pith_tensor_device(ones.get()), PITH_META);
    Tensor y = Call1(g.get(), "add.Tensor", {T(x), T(ones)});
    Tensor r = Call1(g.get(), "arange", {I(6)});
    ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
    ASSERT_EQ(pith_graph_output(g.get(), r.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    Shape sz{2, 3};
    Tensor zeros(pith_zeros(2, sz.data(), PITH_FLOAT32));
    std::vector<Tensor> out = RunGraph(c.get(), {zeros.get()}, 2);
    EXPECT_EQ(pith_test::Values(out[0].get()), (std::vector<double>(6, 1.0)));
    EXPECT_EQ(pith_test::Values(out[1].get()), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

// ---- errors at build time ----

TEST_F(CompileTest, ShapeErrorsAreEagersErrors)
{
    Shape a{2}, b{3};
    Tensor ra(pith_zeros(1, a.data(), PITH_FLOAT32)), rb(pith_zeros(1, b.data(), PITH_FLOAT32));
    Stack es = Push({T(ra), T(rb)});
    ASSERT_NE(pith_call_boxed(Op("add.Tensor"), es.get()), PITH_OK);
    std::string eager = pith_last_error();
    pith_status eager_status = pith_last_status();
    pith_clear_error();

    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {2});
    Tensor y = Input(g.get(), PITH_FLOAT32, {3});
    Stack s = Push({T(x), T(y)});
    EXPECT_EQ(pith_graph_call(g.get(), Op("add.Tensor"), s.get()), eager_status);
    EXPECT_EQ(std::string(pith_last_error()), eager);
    pith_clear_error();
    EXPECT_NE(eager.find("add"), std::string::npos) << eager;
    // Wrong argument types are the dispatcher's errors too.
    Stack s2 = Push({T(x), Str("no")});
    EXPECT_EQ(pith_graph_call(g.get(), Op("add.Tensor"), s2.get()), PITH_ERR_TYPE);
    pith_clear_error();
    // A failed call adds no node.
    EXPECT_NE(Dump(g.get()).find("0 nodes"), std::string::npos);
}

TEST_F(CompileTest, DataDependentShapesAreRefused)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {4});
    Tensor m = Input(g.get(), PITH_BOOL, {4});
    Stack s = Push({T(x)});
    EXPECT_EQ(pith_graph_call(g.get(), Op("nonzero"), s.get()), PITH_ERR_NOT_IMPLEMENTED);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "depends on the data"));
    Stack s2 = Push({T(x), T(m)});
    EXPECT_EQ(pith_graph_call(g.get(), Op("masked_select"), s2.get()), PITH_ERR_NOT_IMPLEMENTED);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "depends on the data"));
}

TEST_F(CompileTest, NullArgumentsAreErrors)
{
    EXPECT_EQ(pith_graph_input(nullptr, PITH_FLOAT32, 0, nullptr, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
    Graph g(pith_graph_new());
    Stack s(pith_stack_new());
    EXPECT_EQ(pith_graph_call(g.get(), nullptr, s.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "operator is NULL"));
    EXPECT_EQ(pith_graph_call(g.get(), Op("neg"), nullptr), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "stack is NULL"));
    EXPECT_EQ(pith_graph_output(g.get(), nullptr), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
    EXPECT_EQ(pith_graph_compile(nullptr, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
    EXPECT_EQ(pith_compiled_run(nullptr, nullptr, 0, nullptr, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
    EXPECT_EQ(pith_graph_dump(nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
    EXPECT_EQ(pith_compiled_dump(nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
    Shape bad{-1};
    EXPECT_EQ(pith_graph_input(g.get(), PITH_FLOAT32, 1, bad.data(), nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative"));
    pith_graph_free(nullptr);
    pith_compiled_free(nullptr);
    pith_compile_options opts;
    pith_compile_options_init(&opts);
    opts.arena_pool = 0;
    EXPECT_EQ(pith_graph_compile(g.get(), &opts), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "arena_pool"));
    opts.arena_pool = 1;
    opts.struct_size = 3;
    EXPECT_EQ(pith_graph_compile(g.get(), &opts), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "pith_compile_options_init"));
}

TEST_F(CompileTest, AnOutOfTheWrongShapeIsRefused)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {3});
    Tensor o = Input(g.get(), PITH_FLOAT32, {0});
    Stack s = Push({T(x), T(x), I(1), T(o)});
    EXPECT_EQ(pith_graph_call(g.get(), Op("add.out"), s.get()), PITH_ERR_NOT_IMPLEMENTED);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "resized"));
}

// ---- errors at run time ----

TEST_F(CompileTest, RunRefusesInputsThatDoNotMatch)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {2, 3});
    Tensor y = Call1(g.get(), "exp", {T(x)});
    ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr);
    pith_tensor *out = reinterpret_cast<pith_tensor *>(0x1);
    auto run1 = [&](pith_tensor *in) { return pith_compiled_run(c.get(), &in, 1, &out, 1); };
    Shape ok{2, 3}, other{3, 2};
    Tensor f64(pith_zeros(2, ok.data(), PITH_FLOAT64));
    EXPECT_EQ(run1(f64.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "dtype float64"));
    EXPECT_EQ(out, nullptr); // outputs are cleared on failure
    Tensor wrong(pith_zeros(2, other.data(), PITH_FLOAT32));
    EXPECT_EQ(run1(wrong.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "sizes [3, 2]"));
    Tensor t(pith_zeros(2, other.data(), PITH_FLOAT32));
    int dims[2] = {1, 0};
    Tensor transposed(pith_permute(t.get(), 2, dims));
    EXPECT_EQ(run1(transposed.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "strides"));
    Tensor meta(pith_empty_strided(2, ok.data(), nullptr, PITH_FLOAT32, PITH_META));
    EXPECT_EQ(run1(meta.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Meta"));
    EXPECT_EQ(run1(x.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "stand-in"));
    EXPECT_EQ(run1(nullptr), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
    EXPECT_EQ(pith_compiled_run(c.get(), nullptr, 0, &out, 1), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "takes 1 inputs"));
    Tensor good(pith_zeros(2, ok.data(), PITH_FLOAT32));
    pith_tensor *in = good.get();
    EXPECT_EQ(pith_compiled_run(c.get(), &in, 1, &out, 2), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "2"));
    // Strides of size-1 dims do not matter.
    Graph g1(pith_graph_new());
    Tensor x1 = Input(g1.get(), PITH_FLOAT32, {1, 3});
    Tensor y1 = Call1(g1.get(), "neg", {T(x1)});
    ASSERT_EQ(pith_graph_output(g1.get(), y1.get()), PITH_OK);
    Compiled c1(pith_graph_compile(g1.get(), nullptr));
    Shape big{4, 3};
    Tensor base(pith_zeros(2, big.data(), PITH_FLOAT32));
    Stack sl = Push({T(base), I(0), I(1), I(2), I(1)});
    ASSERT_EQ(pith_call_boxed(Op("slice.Tensor"), sl.get()), PITH_OK);
    Tensor row(pith_stack_get_tensor(sl.get(), 0));
    std::vector<Tensor> r = RunGraph(c1.get(), {row.get()}, 1);
    EXPECT_TRUE(BitEqual(r[0].get(), Eager1("neg", {T(row)}).get()));
}

TEST_F(CompileTest, DataErrorsAppearAtRunTime)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {5, 2});
    Tensor i = Input(g.get(), PITH_INT64, {3});
    Tensor y = Call1(g.get(), "index_select", {T(x), I(0), T(i)});
    ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    Shape xs{5, 2}, is{3};
    Tensor rx(pith_zeros(2, xs.data(), PITH_FLOAT32));
    int64_t bad[3] = {0, 7, 1};
    Tensor ri(pith_from_data(bad, 1, is.data(), PITH_INT64));
    pith_tensor *ins[2] = {rx.get(), ri.get()};
    pith_tensor *out = nullptr;
    EXPECT_EQ(pith_compiled_run(c.get(), ins, 2, &out, 1), PITH_ERR_INDEX);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index_select"));
    EXPECT_EQ(out, nullptr);
    // The arena is still good for the next run.
    int64_t good[3] = {4, 0, 1};
    Tensor gi(pith_from_data(good, 1, is.data(), PITH_INT64));
    ins[1] = gi.get();
    ASSERT_EQ(pith_compiled_run(c.get(), ins, 2, &out, 1), PITH_OK) << pith_last_error();
    pith_release(out);
}

// ---- passes ----

// Options with fusion off, so that each pass before it is seen alone in the dump (fusion
// has tests of its own, below).
pith_compile_options Unfused()
{
    pith_compile_options opts;
    pith_compile_options_init(&opts);
    opts.fuse = false;
    return opts;
}

TEST_F(CompileTest, DeadCodeIsRemoved)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {8});
    Tensor unused = Call1(g.get(), "exp", {T(x)});
    Tensor unused2 = Call1(g.get(), "neg", {T(unused)});
    Tensor y = Call1(g.get(), "tanh", {T(x)});
    ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
    pith_compile_options opts = Unfused();
    Compiled c(pith_graph_compile(g.get(), &opts));
    std::string dump = Dump(c.get());
    EXPECT_NE(dump.find("node 0: exp removed (dce)"), std::string::npos) << dump;
    EXPECT_NE(dump.find("node 1: neg removed (dce)"), std::string::npos) << dump;
    EXPECT_NE(dump.find("1 steps"), std::string::npos) << dump;
    opts.dce = false;
    Compiled keep(pith_graph_compile(g.get(), &opts));
    EXPECT_NE(Dump(keep.get()).find("3 steps"), std::string::npos) << Dump(keep.get());
}

TEST_F(CompileTest, EffectsAreNeverRemoved)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {8});
    Tensor y = Input(g.get(), PITH_FLOAT32, {8});
    Tensor t = Call1(g.get(), "exp", {T(y)});
    Call1(g.get(), "add_.Tensor", {T(x), T(t)}); // result unused; writes the input
    Tensor r = Call1(g.get(), "neg", {T(y)});
    ASSERT_EQ(pith_graph_output(g.get(), r.get()), PITH_OK);
    EXPECT_NE(Dump(g.get()).find("mutates %0"), std::string::npos) << Dump(g.get());
    Compiled c(pith_graph_compile(g.get(), nullptr));
    std::string dump = Dump(c.get());
    EXPECT_NE(dump.find("3 steps"), std::string::npos) << dump;
    Shape sz{8};
    Tensor rx(pith_zeros(1, sz.data(), PITH_FLOAT32));
    Tensor ry = Random({8}, PITH_FLOAT32, 5);
    RunGraph(c.get(), {rx.get(), ry.get()}, 1);
    EXPECT_TRUE(BitEqual(rx.get(), Eager1("exp", {T(ry)}).get()));
}

TEST_F(CompileTest, CommonSubexpressionsAreMerged)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {8});
    Tensor two1(WrappedNumber(2.0, PITH_FLOAT64)), two2(WrappedNumber(2.0, PITH_FLOAT64));
    Tensor a = Call1(g.get(), "mul.Tensor", {T(x), T(two1)});
    Tensor b = Call1(g.get(), "mul.Tensor", {T(x), T(two2)});
    Tensor c3 = Call1(g.get(), "add.Tensor", {T(a), T(b)});
    ASSERT_EQ(pith_graph_output(g.get(), c3.get()), PITH_OK);
    pith_compile_options opts = Unfused();
    Compiled c(pith_graph_compile(g.get(), &opts));
    std::string dump = Dump(c.get());
    EXPECT_NE(dump.find("node 1: mul.Tensor merged into node 0 (cse)"), std::string::npos) << dump;
    EXPECT_NE(dump.find("2 steps"), std::string::npos) << dump;
    opts.cse = false;
    Compiled off(pith_graph_compile(g.get(), &opts));
    EXPECT_NE(Dump(off.get()).find("3 steps"), std::string::npos);
    Tensor rx = Random({8}, PITH_FLOAT32, 6);
    Tensor e = Eager1("add.Tensor", {T(Eager1("mul.Tensor", {T(rx), T(two1)})),
                                     T(Eager1("mul.Tensor", {T(rx), T(two1)}))});
    EXPECT_TRUE(BitEqual(RunGraph(c.get(), {rx.get()}, 1)[0].get(), e.get()));
    EXPECT_TRUE(BitEqual(RunGraph(off.get(), {rx.get()}, 1)[0].get(), e.get()));
}

TEST_F(CompileTest, CseRespectsVersionCounters)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {4});
    Tensor a = Call1(g.get(), "exp", {T(x)});
    Tensor one(WrappedNumber(1.0, PITH_FLOAT64));
    Call1(g.get(), "add_.Tensor", {T(x), T(one)});
    Tensor b = Call1(g.get(), "exp", {T(x)}); // x changed: not a
    Tensor r = Call1(g.get(), "sub.Tensor", {T(b), T(a)});
    ASSERT_EQ(pith_graph_output(g.get(), r.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    std::string dump = Dump(c.get());
    EXPECT_EQ(dump.find("(cse)"), std::string::npos) << dump;
    Tensor rx = Random({4}, PITH_FLOAT32, 7);
    Tensor ex(pith_clone(rx.get())), cx(pith_clone(rx.get()));
    Tensor ea = Eager1("exp", {T(ex)});
    Eager("add_.Tensor", {T(ex), T(one)});
    Tensor eb = Eager1("exp", {T(ex)});
    Tensor er = Eager1("sub.Tensor", {T(eb), T(ea)});
    EXPECT_TRUE(BitEqual(RunGraph(c.get(), {cx.get()}, 1)[0].get(), er.get()));
    EXPECT_TRUE(BitEqual(cx.get(), ex.get()));
}

TEST_F(CompileTest, CseLeavesResultsThatAreWrittenLater)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {4});
    Tensor a = Call1(g.get(), "exp", {T(x)});
    Tensor b = Call1(g.get(), "exp", {T(x)});
    Call1(g.get(), "relu_", {T(a)});
    Tensor one(WrappedNumber(1.0, PITH_FLOAT64));
    Call1(g.get(), "sub_.Tensor", {T(a), T(one)});
    ASSERT_EQ(pith_graph_output(g.get(), a.get()), PITH_OK);
    ASSERT_EQ(pith_graph_output(g.get(), b.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    EXPECT_EQ(Dump(c.get()).find("(cse)"), std::string::npos) << Dump(c.get());
    Tensor rx = Random({4}, PITH_FLOAT32, 8);
    std::vector<Tensor> out = RunGraph(c.get(), {rx.get()}, 2);
    Tensor eb = Eager1("exp", {T(rx)});
    EXPECT_TRUE(BitEqual(out[1].get(), eb.get()));
    EXPECT_FALSE(BitEqual(out[0].get(), eb.get()));
}

TEST_F(CompileTest, RandomOpsDrawInEagerOrder)
{
    pith_generator *gen = pith_generator_new(42);
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {16});
    Stack s = Push({Ints({16}), Gen(gen)});
    pith_stack_push_dtype(s.get(), PITH_FLOAT32);
    ASSERT_EQ(pith_graph_call(g.get(), Op("rand"), s.get()), PITH_OK) << pith_last_error();
    Tensor r1(pith_stack_get_tensor(s.get(), 0));
    Stack s2 = Push({Ints({16}), Gen(gen)});
    pith_stack_push_dtype(s2.get(), PITH_FLOAT32);
    ASSERT_EQ(pith_graph_call(g.get(), Op("rand"), s2.get()), PITH_OK);
    Tensor r2(pith_stack_get_tensor(s2.get(), 0));
    Tensor u = Call1(g.get(), "uniform_", {T(x), D(-1), D(1), Gen(gen)});
    Tensor unused = Call1(g.get(), "randn", {Ints({3}), Gen(gen)}); // random: kept
    Tensor sum = Call1(g.get(), "add.Tensor", {T(r1), T(r2)});
    ASSERT_EQ(pith_graph_output(g.get(), sum.get()), PITH_OK);
    ASSERT_EQ(pith_graph_output(g.get(), r2.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    std::string dump = Dump(c.get());
    EXPECT_EQ(dump.find("(cse)"), std::string::npos) << dump;
    EXPECT_EQ(dump.find("(dce)"), std::string::npos) << dump;
    EXPECT_EQ(Count(dump, "random"), 4u) << dump;

    Shape sz{16};
    for (int rep = 0; rep < 2; rep++) {
        pith_generator_manual_seed(gen, 7 + (uint64_t)rep);
        Tensor ex(pith_zeros(1, sz.data(), PITH_FLOAT32));
        Stack e1 = Push({Ints({16}), Gen(gen)});
        pith_stack_push_dtype(e1.get(), PITH_FLOAT32);
        ASSERT_EQ(pith_call_boxed(Op("rand"), e1.get()), PITH_OK);
        Tensor er1(pith_stack_get_tensor(e1.get(), 0));
        Stack e2 = Push({Ints({16}), Gen(gen)});
        pith_stack_push_dtype(e2.get(), PITH_FLOAT32);
        ASSERT_EQ(pith_call_boxed(Op("rand"), e2.get()), PITH_OK);
        Tensor er2(pith_stack_get_tensor(e2.get(), 0));
        Eager("uniform_", {T(ex), D(-1), D(1), Gen(gen)});
        Eager("randn", {Ints({3}), Gen(gen)});
        Tensor esum = Eager1("add.Tensor", {T(er1), T(er2)});
        uint64_t seed_after, off_after;
        pith_generator_get_state(gen, &seed_after, &off_after);

        pith_generator_manual_seed(gen, 7 + (uint64_t)rep);
        Tensor cx(pith_zeros(1, sz.data(), PITH_FLOAT32));
        std::vector<Tensor> out = RunGraph(c.get(), {cx.get()}, 2);
        EXPECT_TRUE(BitEqual(out[0].get(), esum.get()));
        EXPECT_TRUE(BitEqual(out[1].get(), er2.get()));
        EXPECT_TRUE(BitEqual(cx.get(), ex.get()));
        uint64_t seed, off;
        pith_generator_get_state(gen, &seed, &off);
        EXPECT_EQ(off, off_after);
    }
    pith_generator_release(gen);
}

// ---- views ----

TEST_F(CompileTest, AnOutputThatAliasesAnInputIsAViewOfIt)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {3, 4});
    Tensor t = Call1(g.get(), "transpose.int", {T(x), I(0), I(1)});
    Tensor s = Call1(g.get(), "slice.Tensor", {T(t), I(0), I(1), I(3), I(1)});
    Tensor u = Call1(g.get(), "unsqueeze", {T(s), I(0)});
    ASSERT_EQ(pith_graph_output(g.get(), u.get()), PITH_OK);
    ASSERT_EQ(pith_graph_output(g.get(), x.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    Tensor rx = Random({3, 4}, PITH_FLOAT32, 9);
    std::vector<Tensor> out = RunGraph(c.get(), {rx.get()}, 2);
    EXPECT_EQ(out[1].get(), rx.get()); // the input itself
    EXPECT_EQ((char *)pith_data_ptr(out[0].get()), (char *)pith_data_ptr(rx.get()) + 4);
    Tensor et = Eager1("transpose.int", {T(rx), I(0), I(1)});
    Tensor es = Eager1("slice.Tensor", {T(et), I(0), I(1), I(3), I(1)});
    Tensor eu = Eager1("unsqueeze", {T(es), I(0)});
    EXPECT_TRUE(BitEqual(out[0].get(), eu.get()));
    for (int d = 0; d < 3; d++)
        EXPECT_EQ(pith_stride(out[0].get(), d), pith_stride(eu.get(), d));
    // Writing through the view writes the input.
    ASSERT_EQ(pith_mul_(out[0].get(), out[0].get()), PITH_OK);
    ASSERT_EQ(pith_mul_(eu.get(), eu.get()), PITH_OK);
    EXPECT_TRUE(BitEqual(rx.get(), rx.get()));
}

TEST_F(CompileTest, InPlaceOpsOnViewsOfIntermediates)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT64, {4, 6});
    Tensor e = Call1(g.get(), "exp", {T(x)});
    Tensor v = Call1(g.get(), "narrow", {T(e), I(1), I(2), I(3)});
    Tensor k(WrappedNumber(-2.0, PITH_FLOAT64));
    Call1(g.get(), "mul_.Tensor", {T(v), T(k)});
    Tensor s = Call1(g.get(), "sum.dim_IntList", {T(e), Ints({0})});
    ASSERT_EQ(pith_graph_output(g.get(), s.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    Tensor rx = Random({4, 6}, PITH_FLOAT64, 10);
    Tensor ee = Eager1("exp", {T(rx)});
    Tensor ev = Eager1("narrow", {T(ee), I(1), I(2), I(3)});
    Eager("mul_.Tensor", {T(ev), T(k)});
    Tensor esum = Eager1("sum.dim_IntList", {T(ee), Ints({0})});
    EXPECT_TRUE(BitEqual(RunGraph(c.get(), {rx.get()}, 1)[0].get(), esum.get()));
}

TEST_F(CompileTest, ReshapeThatCopiesIsNotAView)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {3, 4});
    Tensor t = Call1(g.get(), "t", {T(x)});
    Tensor r = Call1(g.get(), "reshape", {T(t), Ints({12})});
    Tensor v = Call1(g.get(), "reshape", {T(x), Ints({2, 6})});
    ASSERT_EQ(pith_graph_output(g.get(), r.get()), PITH_OK);
    ASSERT_EQ(pith_graph_output(g.get(), v.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    Tensor rx = Random({3, 4}, PITH_FLOAT32, 11);
    std::vector<Tensor> out = RunGraph(c.get(), {rx.get()}, 2);
    EXPECT_NE(pith_data_ptr(out[0].get()), pith_data_ptr(rx.get()));
    EXPECT_EQ(pith_data_ptr(out[1].get()), pith_data_ptr(rx.get()));
    Tensor et = Eager1("t", {T(rx)});
    EXPECT_TRUE(BitEqual(out[0].get(), Eager1("reshape", {T(et), Ints({12})}).get()));
}

// ---- the arena ----

TEST_F(CompileTest, TheArenaReusesBuffersByLiveness)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {256});
    Tensor cur = Call1(g.get(), "exp", {T(x)});
    for (int i = 0; i < 8; i++)
        cur = Call1(g.get(), i % 2 ? "tanh" : "neg", {T(cur)});
    Tensor r = Call1(g.get(), "sum.dim_IntList", {T(cur), Ints({0})});
    ASSERT_EQ(pith_graph_output(g.get(), r.get()), PITH_OK);
    pith_compile_options opts = Unfused();
    Compiled c(pith_graph_compile(g.get(), &opts));
    ASSERT_NE(c, nullptr) << pith_last_error();
    size_t arena = pith_compiled_arena_bytes(c.get());
    size_t total = pith_compiled_intermediate_bytes(c.get());
    EXPECT_EQ(total, 9u * 1024u);
    EXPECT_EQ(arena, 2u * 1024u) << Dump(c.get()); // a chain needs two buffers
    std::string dump = Dump(c.get());
    EXPECT_NE(dump.find("arena 2048 bytes (intermediates 9216 bytes)"), std::string::npos) << dump;
    opts.plan_memory = false;
    Compiled flat(pith_graph_compile(g.get(), &opts));
    EXPECT_EQ(pith_compiled_arena_bytes(flat.get()), total);
    Tensor rx = Random({256}, PITH_FLOAT32, 12);
    EXPECT_TRUE(BitEqual(RunGraph(c.get(), {rx.get()}, 1)[0].get(),
                         RunGraph(flat.get(), {rx.get()}, 1)[0].get()));
}

// ---- boxed kernels ----

pith_status scale_cpu(const pith_op *, pith_stack *s, void *)
{
    Tensor x(pith_stack_get_tensor(s, 0));
    double k = pith_stack_get_double(s, 1);
    Tensor kt(pith_full(0, nullptr, k, pith_tensor_dtype(x.get())));
    pith_tensor *r = pith_mul(x.get(), kt.get());
    if (!r)
        return pith_last_status();
    pith_stack_drop(s, 2);
    pith_status st = pith_stack_push_tensor(s, r);
    pith_release(r);
    return st;
}

pith_status scale_meta(const pith_op *, pith_stack *s, void *)
{
    Tensor x(pith_stack_get_tensor(s, 0));
    int64_t sizes[PITH_MAX_DIMS];
    int n = pith_sizes(x.get(), sizes);
    pith_tensor *r = pith_empty_strided(n, sizes, nullptr, pith_tensor_dtype(x.get()), PITH_META);
    pith_stack_drop(s, 2);
    pith_status st = pith_stack_push_tensor(s, r);
    pith_release(r);
    return st;
}

TEST_F(CompileTest, ABoxedKernelIsCalledBoxed)
{
    static bool defined = false;
    if (!defined) {
        ASSERT_EQ(pith_op_define("graphtest::scale(Tensor x, float s) -> Tensor"), PITH_OK);
        ASSERT_EQ(pith_kernel_register("graphtest::scale", "CPU", scale_cpu, nullptr), PITH_OK);
        ASSERT_EQ(pith_kernel_register("graphtest::scale", "Meta", scale_meta, nullptr), PITH_OK);
        defined = true;
    }
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {5});
    Tensor y = Call1(g.get(), "graphtest::scale", {T(x), D(3.0)});
    Tensor z = Call1(g.get(), "neg", {T(y)});
    ASSERT_EQ(pith_graph_output(g.get(), z.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    EXPECT_NE(Dump(c.get()).find("boxed"), std::string::npos) << Dump(c.get());
    Shape sz{5};
    Tensor ones(pith_ones(1, sz.data(), PITH_FLOAT32));
    EXPECT_EQ(pith_test::Values(RunGraph(c.get(), {ones.get()}, 1)[0].get()),
              (std::vector<double>(5, -3.0)));
}

TEST_F(CompileTest, AnOpWithoutAMetaKernelIsRefusedAtBuildTime)
{
    static bool defined = false;
    if (!defined) {
        ASSERT_EQ(pith_op_define("graphtest::nometa(Tensor x) -> Tensor"), PITH_OK);
        ASSERT_EQ(pith_kernel_register("graphtest::nometa", "CPU", scale_cpu, nullptr), PITH_OK);
        defined = true;
    }
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {5});
    Stack s = Push({T(x)});
    EXPECT_NE(pith_graph_call(g.get(), Op("graphtest::nometa"), s.get()), PITH_OK);
    EXPECT_NE(std::string(pith_last_error()).find("nometa"), std::string::npos)
        << pith_last_error();
    pith_clear_error();
}

TEST_F(CompileTest, TheGraphDumpShowsNodesAndEffects)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {2, 3});
    Tensor y = Call1(g.get(), "transpose.int", {T(x), I(0), I(1)});
    Tensor z = Call1(g.get(), "mul.Tensor", {T(y), T(y)});
    Call1(g.get(), "exp_", {T(z)});
    ASSERT_EQ(pith_graph_output(g.get(), z.get()), PITH_OK);
    std::string dump = Dump(g.get());
    EXPECT_NE(dump.find("%0 = input 0: float32[2, 3]"), std::string::npos) << dump;
    EXPECT_NE(dump.find("node 0: %1 = transpose.int(%0, 0, 1)  pure"), std::string::npos) << dump;
    EXPECT_NE(dump.find("(view of %0)"), std::string::npos) << dump;
    EXPECT_NE(dump.find("node 2: %2 = exp_(%2)  mutates %2"), std::string::npos) << dump;
    EXPECT_NE(dump.find("output 0: %2"), std::string::npos) << dump;
    Compiled c(pith_graph_compile(g.get(), nullptr));
    std::string cd = Dump(c.get());
    EXPECT_NE(cd.find("step 1 (node 1): out mul.out(%1, %1, %2)"), std::string::npos) << cd;
    EXPECT_NE(cd.find("output 0: %2 (allocated by the run (output))"), std::string::npos) << cd;
}

// Several threads run one compiled graph at once: more threads than arenas in the pool, so
// some runs make arenas of their own. Run under TSan by scripts/test.sh (-R Concurrency).
TEST(CompileConcurrency, ThreadsRunOneCompiledGraphAtOnce)
{
    size_t live = pith_live_tensors();
    {
        Graph g(pith_graph_new());
        Tensor x = Input(g.get(), PITH_FLOAT32, {16, 32});
        Tensor wt = Random({32, 8}, PITH_FLOAT32, 20);
        Tensor w(pith_graph_param(g.get(), wt.get()));
        Tensor m = Call1(g.get(), "mm", {T(x), T(w)});
        Tensor e = Call1(g.get(), "tanh", {T(m)});
        Tensor t = Call1(g.get(), "transpose.int", {T(e), I(0), I(1)});
        Tensor s = Call1(g.get(), "sum.dim_IntList", {T(t), Ints({1})});
        ASSERT_EQ(pith_graph_output(g.get(), s.get()), PITH_OK);
        ASSERT_EQ(pith_graph_output(g.get(), t.get()), PITH_OK);
        pith_compile_options opts;
        pith_compile_options_init(&opts);
        opts.arena_pool = 2;
        Compiled c(pith_graph_compile(g.get(), &opts));
        ASSERT_NE(c, nullptr) << pith_last_error();
        const int kThreads = 4, kRuns = 50;
        std::vector<Tensor> inputs, expected;
        for (int i = 0; i < kThreads; i++) {
            inputs.push_back(Random({16, 32}, PITH_FLOAT32, 100 + (uint64_t)i));
            Tensor em = Eager1("mm", {T(inputs.back()), T(wt)});
            Tensor ee = Eager1("tanh", {T(em)});
            Tensor et = Eager1("transpose.int", {T(ee), I(0), I(1)});
            expected.push_back(Eager1("sum.dim_IntList", {T(et), Ints({1})}));
        }
        std::vector<int> failures(kThreads, 0);
        std::vector<std::thread> threads;
        for (int i = 0; i < kThreads; i++)
            threads.emplace_back([&, i] {
                for (int r = 0; r < kRuns; r++) {
                    pith_tensor *in = inputs[(size_t)i].get();
                    pith_tensor *out[2] = {nullptr, nullptr};
                    if (pith_compiled_run(c.get(), &in, 1, out, 2) != PITH_OK ||
                        !BitEqual(out[0], expected[(size_t)i].get()))
                        failures[(size_t)i]++;
                    pith_release(out[0]);
                    pith_release(out[1]);
                }
            });
        for (std::thread &t : threads)
            t.join();
        for (int i = 0; i < kThreads; i++)
            EXPECT_EQ(failures[(size_t)i], 0) << "thread " << i;
    }
    EXPECT_EQ(pith_live_tensors(), live);
}

// ---- fusion (See Note [Fusion legality] in compile/fusion.c) ----

// gelu(x * w + b) * 0.5 + x, the pointwise chain, on stand-ins or eagerly.
struct Chain {
    std::vector<Tensor> keep;
    Tensor half{WrappedNumber(0.5, PITH_FLOAT64)};
    Tensor Build(pith_graph *g, const Tensor &x, const Tensor &w, const Tensor &b)
    {
        auto call = [&](const char *op, const std::vector<Arg> &args) {
            keep.push_back(g ? Call1(g, op, args) : Eager1(op, args));
            return keep.back().get();
        };
        const pith_tensor *t = call("mul.Tensor", {T(x), T(w)});
        t = call("add.Tensor", {T(t), T(b)});
        t = call("gelu", {T(t), Str("none")});
        t = call("mul.Tensor", {T(t), T(half)});
        return g ? Call1(g, "add.Tensor", {T(t), T(x)}) : Eager1("add.Tensor", {T(t), T(x)});
    }
};

Tensor Param(pith_graph *g, const Tensor &t)
{
    Tensor p(pith_graph_param(g, t.get()));
    EXPECT_NE(p, nullptr) << pith_last_error();
    return p;
}

// The chain compiled (default options) for an input of `shape`, with w and b as params.
struct CompiledChain {
    Graph g{pith_graph_new()};
    Compiled c;
    CompiledChain(pith_dtype dtype, const Shape &shape, const Tensor &rw, const Tensor &rb)
    {
        Tensor x = Input(g.get(), dtype, shape);
        Tensor w = Param(g.get(), rw), b = Param(g.get(), rb);
        Chain chain;
        Tensor y = chain.Build(g.get(), x, w, b);
        EXPECT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
        c.reset(pith_graph_compile(g.get(), nullptr));
        EXPECT_NE(c, nullptr) << pith_last_error();
    }
};

TEST_F(CompileTest, AnElementwiseChainIsOneGroupWithNoArena)
{
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64})
        for (Shape shape : {Shape{7}, Shape{1000}, Shape{3, 4097}, Shape{300001}}) {
            Tensor rx = Random(shape, dtype, 21), rw = Random(shape, dtype, 22),
                   rb = Random(shape, dtype, 23);
            CompiledChain cc(dtype, shape, rw, rb);
            Graph &g = cc.g;
            Compiled &c = cc.c;
            ASSERT_NE(c, nullptr);
            std::string dump = Dump(c.get());
            EXPECT_NE(dump.find("1 steps, 0 buffers, arena 0 bytes"), std::string::npos) << dump;
            EXPECT_NE(dump.find("group of 5"), std::string::npos) << dump;
            EXPECT_EQ(Count(dump, "tile buffer "), 4u) << dump; // four intermediates
            EXPECT_NE(dump.find("(const)"), std::string::npos) << dump;
            Chain eager;
            Tensor e = eager.Build(nullptr, rx, rw, rb);
            EXPECT_TRUE(BitEqual(RunGraph(c.get(), {rx.get()}, 1)[0].get(), e.get()))
                << pith_dtype_name(dtype) << ", " << shape.size() << " dims, "
                << pith_numel(rx.get()) << " elements";
            pith_compile_options opts = Unfused();
            Compiled off(pith_graph_compile(g.get(), &opts));
            EXPECT_EQ(Dump(off.get()).find("group"), std::string::npos);
            EXPECT_TRUE(BitEqual(RunGraph(off.get(), {rx.get()}, 1)[0].get(), e.get()));
        }
}

TEST_F(CompileTest, AFusedGroupBroadcastsAndReadsStridedInputs)
{
    // x is a transposed (600, 300) view, bias a row broadcast over it, s a 0-dim input.
    Shape base{300, 600};
    int64_t tstrides[2] = {1, 600};
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {600, 300}, tstrides);
    Tensor bias = Input(g.get(), PITH_FLOAT32, {300});
    Tensor sc = Input(g.get(), PITH_FLOAT32, {});
    Tensor t1 = Call1(g.get(), "add.Tensor", {T(x), T(bias)});
    Tensor t2 = Call1(g.get(), "tanh", {T(t1)});
    Tensor t3 = Call1(g.get(), "mul.Tensor", {T(t2), T(sc)});
    Tensor t4 = Call1(g.get(), "sub.Tensor", {T(t3), T(x), D(2.5)}); // alpha
    ASSERT_EQ(pith_graph_output(g.get(), t4.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    std::string dump = Dump(c.get());
    EXPECT_NE(dump.find("group of 4, over [600, 300]"), std::string::npos) << dump;
    Tensor rbase = Random(base, PITH_FLOAT32, 31);
    Tensor rx(pith_transpose(rbase.get(), 0, 1));
    Tensor rbias = Random({300}, PITH_FLOAT32, 32), rs = Random({}, PITH_FLOAT32, 33);
    Tensor e1 = Eager1("add.Tensor", {T(rx), T(rbias)});
    Tensor e2 = Eager1("tanh", {T(e1)});
    Tensor e3 = Eager1("mul.Tensor", {T(e2), T(rs)});
    Tensor e4 = Eager1("sub.Tensor", {T(e3), T(rx), D(2.5)});
    EXPECT_TRUE(BitEqual(RunGraph(c.get(), {rx.get(), rbias.get(), rs.get()}, 1)[0].get(),
                         e4.get()));
}

// See Note [Fusion tiles]: tiles shorter than GROUP_MIN_TILE cost more than they save.
TEST_F(CompileTest, AChainWhoseTilesWouldBeShortIsNotFused)
{
    int64_t tstrides[2] = {1, 5000};
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {5000, 3}, tstrides); // inner dim stays 3
    Tensor y = Input(g.get(), PITH_FLOAT32, {40, 64});
    Tensor a = Call1(g.get(), "tanh", {T(x)});
    Tensor b = Call1(g.get(), "neg", {T(a)});
    Tensor k(WrappedNumber(0.125, PITH_FLOAT64));
    Tensor c1 = Call1(g.get(), "mul.Tensor", {T(y), T(k)});
    Tensor p = Call1(g.get(), "softmax.int", {T(c1), I(-1), None()}); // rows of 64
    Tensor small = Input(g.get(), PITH_FLOAT32, {5, 7});              // one tile: fused
    Tensor d = Call1(g.get(), "exp", {T(small)});
    Tensor e = Call1(g.get(), "neg", {T(d)});
    for (const Tensor *out : {&b, &p, &e})
        ASSERT_EQ(pith_graph_output(g.get(), out->get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    std::string dump = Dump(c.get());
    EXPECT_EQ(Count(dump, ": group of "), 1u) << dump;
    EXPECT_NE(dump.find("group of 2, over [35]"), std::string::npos) << dump;
    EXPECT_NE(dump.find("out softmax.int_out"), std::string::npos) << dump;
    Tensor rbase = Random({3, 5000}, PITH_FLOAT32, 35);
    Tensor rx(pith_transpose(rbase.get(), 0, 1));
    Tensor ry = Random({40, 64}, PITH_FLOAT32, 36), rs = Random({5, 7}, PITH_FLOAT32, 37);
    std::vector<Tensor> out = RunGraph(c.get(), {rx.get(), ry.get(), rs.get()}, 3);
    Tensor ea = Eager1("tanh", {T(rx)});
    EXPECT_TRUE(BitEqual(out[0].get(), Eager1("neg", {T(ea)}).get()));
    Tensor ec = Eager1("mul.Tensor", {T(ry), T(k)});
    EXPECT_TRUE(BitEqual(out[1].get(), Eager1("softmax.int", {T(ec), I(-1), None()}).get()));
    Tensor ed = Eager1("exp", {T(rs)});
    EXPECT_TRUE(BitEqual(out[2].get(), Eager1("neg", {T(ed)}).get()));
}

TEST_F(CompileTest, AResultReadAfterItsGroupIsMaterialised)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {64, 64});
    Tensor a = Call1(g.get(), "exp", {T(x)});
    Tensor b = Call1(g.get(), "neg", {T(a)});    // read by the group and by mm after it
    Tensor c1 = Call1(g.get(), "sigmoid", {T(b)});
    Tensor m = Call1(g.get(), "mm", {T(b), T(c1)});
    Tensor tv = Call1(g.get(), "transpose.int", {T(a), I(0), I(1)}); // a view of a member
    Tensor r = Call1(g.get(), "add.Tensor", {T(m), T(tv)});
    ASSERT_EQ(pith_graph_output(g.get(), r.get()), PITH_OK);
    ASSERT_EQ(pith_graph_output(g.get(), c1.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    std::string dump = Dump(c.get());
    EXPECT_NE(dump.find("group of 3"), std::string::npos) << dump;
    EXPECT_EQ(Count(dump, "tile buffer "), 0u) << dump; // each result is read after
    EXPECT_NE(dump.find("%2 = neg(%1) [float32[64, 64], arena buffer"), std::string::npos)
        << dump;
    EXPECT_NE(dump.find("%3 = sigmoid(%2) [float32[64, 64], allocated by the run (output)]"),
              std::string::npos)
        << dump;
    Tensor rx = Random({64, 64}, PITH_FLOAT32, 41);
    Tensor ea = Eager1("exp", {T(rx)}), eb = Eager1("neg", {T(ea)});
    Tensor ec = Eager1("sigmoid", {T(eb)});
    Tensor em = Eager1("mm", {T(eb), T(ec)});
    Tensor et = Eager1("transpose.int", {T(ea), I(0), I(1)});
    Tensor er = Eager1("add.Tensor", {T(em), T(et)});
    std::vector<Tensor> out = RunGraph(c.get(), {rx.get()}, 2);
    EXPECT_TRUE(BitEqual(out[0].get(), er.get()));
    EXPECT_TRUE(BitEqual(out[1].get(), ec.get()));
}

TEST_F(CompileTest, EffectsIntegersAndShapeChangesEndAGroup)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {4, 8});
    Tensor i = Input(g.get(), PITH_INT32, {4, 8});
    Tensor row = Input(g.get(), PITH_FLOAT32, {8});
    Tensor a = Call1(g.get(), "exp", {T(x)});
    Tensor b = Call1(g.get(), "neg", {T(a)});                  // group 1: exp, neg
    Call1(g.get(), "mul_.Tensor", {T(b), T(x)});               // in place: an effect
    Tensor c1 = Call1(g.get(), "tanh", {T(b)});
    Tensor d = Call1(g.get(), "add.Tensor", {T(c1), T(x)});    // group 2: tanh, add
    Tensor s = Call1(g.get(), "sum.dim_IntList", {T(d), Ints({0})}); // shape [8]
    Tensor e = Call1(g.get(), "mul.Tensor", {T(s), T(row)});
    Tensor f = Call1(g.get(), "sigmoid", {T(e)});              // group 3: mul, sigmoid
    Tensor j = Call1(g.get(), "mul.Tensor", {T(i), T(i)});     // int32: never fused
    Tensor k = Call1(g.get(), "add.Tensor", {T(j), T(i)});
    ASSERT_EQ(pith_graph_output(g.get(), f.get()), PITH_OK);
    ASSERT_EQ(pith_graph_output(g.get(), k.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    std::string dump = Dump(c.get());
    EXPECT_EQ(Count(dump, ": group of 2"), 3u) << dump;
    EXPECT_NE(dump.find("call mul_.Tensor"), std::string::npos) << dump;
    EXPECT_NE(dump.find("out mul.out"), std::string::npos) << dump; // the int32 ones
    EXPECT_NE(dump.find("out add.out"), std::string::npos) << dump;
    Tensor rx = Random({4, 8}, PITH_FLOAT32, 51), rrow = Random({8}, PITH_FLOAT32, 52);
    Tensor ri(pith_to_dtype(Tensor(pith_mul(rx.get(), Tensor(WrappedNumber(100, PITH_FLOAT64))
                                                          .get()))
                                .get(),
                            PITH_INT32));
    Tensor ea = Eager1("exp", {T(rx)}), eb = Eager1("neg", {T(ea)});
    Eager1("mul_.Tensor", {T(eb), T(rx)});
    Tensor ec = Eager1("tanh", {T(eb)}), ed = Eager1("add.Tensor", {T(ec), T(rx)});
    Tensor es = Eager1("sum.dim_IntList", {T(ed), Ints({0})});
    Tensor ef = Eager1("sigmoid", {T(Eager1("mul.Tensor", {T(es), T(rrow)}))});
    Tensor ej = Eager1("mul.Tensor", {T(ri), T(ri)}), ek = Eager1("add.Tensor", {T(ej), T(ri)});
    std::vector<Tensor> out = RunGraph(c.get(), {rx.get(), ri.get(), rrow.get()}, 2);
    EXPECT_TRUE(BitEqual(out[0].get(), ef.get()));
    EXPECT_TRUE(BitEqual(out[1].get(), ek.get()));
}

TEST_F(CompileTest, AHalfOpWithAFloatScalarIsNotFused)
{
    // float16 * 0.5 runs eager's float32 loop through a temporary (Note [Reduced-precision
    // ops with a scalar]): not a member. float16 + float16 is.
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT16, {300});
    Tensor half(WrappedNumber(0.5, PITH_FLOAT64));
    Tensor a = Call1(g.get(), "mul.Tensor", {T(x), T(half)});
    Tensor b = Call1(g.get(), "add.Tensor", {T(a), T(x)});
    Tensor c1 = Call1(g.get(), "neg", {T(b)});
    ASSERT_EQ(pith_graph_output(g.get(), c1.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    std::string dump = Dump(c.get());
    EXPECT_NE(dump.find("out mul.out"), std::string::npos) << dump;
    EXPECT_NE(dump.find("group of 2"), std::string::npos) << dump;
    Tensor rx = Random({300}, PITH_FLOAT16, 61);
    Tensor e = Eager1("neg", {T(Eager1("add.Tensor", {T(Eager1("mul.Tensor", {T(rx), T(half)})),
                                                     T(rx)}))});
    EXPECT_TRUE(BitEqual(RunGraph(c.get(), {rx.get()}, 1)[0].get(), e.get()));
}

TEST_F(CompileTest, AGroupWithManyLiveResultsMaterialisesThePastTheTileBuffers)
{
    // Twelve results of x, all live until the sum chain at the end reads them.
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {2000});
    std::vector<Tensor> parts;
    const char *ops[3] = {"exp", "tanh", "sigmoid"};
    for (int i = 0; i < 12; i++)
        parts.push_back(Call1(g.get(), ops[i % 3], {T(i < 3 ? x : parts[(size_t)i - 3])}));
    Tensor acc = Call1(g.get(), "add.Tensor", {T(parts[0]), T(parts[1])});
    for (size_t i = 2; i < parts.size(); i++)
        acc = Call1(g.get(), "add.Tensor", {T(acc), T(parts[i])});
    ASSERT_EQ(pith_graph_output(g.get(), acc.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    std::string dump = Dump(c.get());
    EXPECT_NE(dump.find("group of 20, "), std::string::npos) << dump; // GROUP_MAX_MEMBERS
    EXPECT_NE(dump.find("8 tile buffers"), std::string::npos) << dump;
    EXPECT_NE(dump.find("arena buffer"), std::string::npos) << dump; // some past the eight
    Tensor rx = Random({2000}, PITH_FLOAT32, 71);
    std::vector<Tensor> ep;
    for (int i = 0; i < 12; i++)
        ep.push_back(Eager1(ops[i % 3], {T(i < 3 ? rx : ep[(size_t)i - 3])}));
    Tensor eacc = Eager1("add.Tensor", {T(ep[0]), T(ep[1])});
    for (size_t i = 2; i < ep.size(); i++)
        eacc = Eager1("add.Tensor", {T(eacc), T(ep[i])});
    EXPECT_TRUE(BitEqual(RunGraph(c.get(), {rx.get()}, 1)[0].get(), eacc.get()));
}

// x * 0.125 -> exp -> <reduction>(dim -1): the root folds each row in its tile buffer.
TEST_F(CompileTest, AReductionOverTheLastDimEndsAGroupAsItsRoot)
{
    struct Case {
        const char *op;
        bool has_dtype; // sum and mean take dtype=None
    };
    for (Case rc : {Case{"sum.dim_IntList", true}, Case{"mean.dim", true}, Case{"amax", false},
                    Case{"amin", false}})
        for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64})
            for (Shape shape : {Shape{5, 7}, Shape{3, 1000}, Shape{40, 64}, Shape{2, 3, 8192},
                                Shape{1000}})
                for (bool keepdim : {false, true}) {
                    Graph g(pith_graph_new());
                    Tensor x = Input(g.get(), dtype, shape);
                    Tensor k(WrappedNumber(0.125, PITH_FLOAT64));
                    Tensor a = Call1(g.get(), "mul.Tensor", {T(x), T(k)});
                    Tensor b = Call1(g.get(), "exp", {T(a)});
                    std::vector<Arg> args = {T(b), Ints({-1}), B(keepdim)};
                    if (rc.has_dtype)
                        args.push_back(None());
                    Tensor r = Call1(g.get(), rc.op, args);
                    ASSERT_EQ(pith_graph_output(g.get(), r.get()), PITH_OK);
                    Compiled c(pith_graph_compile(g.get(), nullptr));
                    ASSERT_NE(c, nullptr) << pith_last_error();
                    std::string dump = Dump(c.get());
                    int64_t numel = 1;
                    for (int64_t n : shape)
                        numel *= n;
                    // Short rows, more than one, stay unfused (Note [Fusion tiles]).
                    if (shape.back() >= 256 || numel == shape.back()) {
                        EXPECT_NE(dump.find("1 steps, 0 buffers"), std::string::npos) << dump;
                        EXPECT_NE(dump.find("group of 3"), std::string::npos) << dump;
                    } else {
                        EXPECT_EQ(dump.find("the last dim"), std::string::npos) << dump;
                    }
                    Tensor rx = Random(shape, dtype, 101);
                    Tensor ea = Eager1("mul.Tensor", {T(rx), T(k)});
                    Tensor eb = Eager1("exp", {T(ea)});
                    std::vector<Arg> eargs = {T(eb), Ints({-1}), B(keepdim)};
                    if (rc.has_dtype)
                        eargs.push_back(None());
                    Tensor e = Eager1(rc.op, eargs);
                    EXPECT_TRUE(BitEqual(RunGraph(c.get(), {rx.get()}, 1)[0].get(), e.get()))
                        << rc.op << " " << pith_dtype_name(dtype) << " keepdim " << keepdim
                        << "\n"
                        << dump;
                }
}

// A reduction over several innermost dims, and a layer_norm over several, make rows of
// their product; an input broadcast inside such a row keeps the group from forming.
TEST_F(CompileTest, ReductionsAndLayerNormOverTheInnermostDimsAreFused)
{
    struct Case {
        Shape shape;
        std::vector<int64_t> dims;
        Shape other; // the second input's shape
        bool fused;
    };
    for (const Case &cs : std::vector<Case>{
             {{4, 8, 64}, {-2, -1}, {4, 8, 64}, true},
             {{4, 8, 64}, {2, 1}, {8, 64}, true},
             {{2, 3, 4, 100}, {1, 2, 3}, {2, 3, 4, 100}, true},
             {{4, 8, 64}, {-2, -1}, {4, 1, 64}, false}, // broadcast along a dim of the row
             {{4, 8, 64}, {0, 1}, {4, 8, 64}, false},   // not the innermost dims
         })
        for (const char *op : {"sum.dim_IntList", "amax"}) {
            Graph g(pith_graph_new());
            Tensor x = Input(g.get(), PITH_FLOAT32, cs.shape);
            Tensor y = Input(g.get(), PITH_FLOAT32, cs.other);
            Tensor a = Call1(g.get(), "mul.Tensor", {T(x), T(y)});
            Tensor b = Call1(g.get(), "exp", {T(a)});
            bool sum = std::string(op) == "sum.dim_IntList";
            std::vector<Arg> args = {T(b), Ints(cs.dims), B(false)};
            if (sum)
                args.push_back(None());
            Tensor r = Call1(g.get(), op, args);
            ASSERT_EQ(pith_graph_output(g.get(), r.get()), PITH_OK);
            Compiled c(pith_graph_compile(g.get(), nullptr));
            ASSERT_NE(c, nullptr) << pith_last_error();
            std::string dump = Dump(c.get());
            std::string last = ", the last " + std::to_string(cs.dims.size()) + " dims)";
            EXPECT_EQ(dump.find(last) != std::string::npos, cs.fused) << dump;
            EXPECT_EQ(dump.find("1 steps, 0 buffers") != std::string::npos, cs.fused) << dump;
            Tensor rx = Random(cs.shape, PITH_FLOAT32, 111), ry = Random(cs.other, PITH_FLOAT32, 112);
            Tensor eb = Eager1("exp", {T(Eager1("mul.Tensor", {T(rx), T(ry)}))});
            std::vector<Arg> eargs = {T(eb), Ints(cs.dims), B(false)};
            if (sum)
                eargs.push_back(None());
            Tensor e = Eager1(op, eargs);
            EXPECT_TRUE(BitEqual(RunGraph(c.get(), {rx.get(), ry.get()}, 1)[0].get(), e.get()))
                << op << "\n" << dump;
        }
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64}) {
        Shape shape = {3, 8, 64}, normalized = {8, 64};
        Tensor rw = Random(normalized, dtype, 113), rb = Random(normalized, dtype, 114);
        Graph g(pith_graph_new());
        Tensor x = Input(g.get(), dtype, shape);
        Tensor w = Param(g.get(), rw), b = Param(g.get(), rb);
        Tensor a = Call1(g.get(), "tanh", {T(x)});
        Tensor h = Call1(g.get(), "layer_norm",
                         {T(a), Ints(normalized), T(w), T(b), D(1e-5), B(true)});
        Tensor y = Call1(g.get(), "mul.Tensor", {T(h), T(x)});
        ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
        Compiled c(pith_graph_compile(g.get(), nullptr));
        ASSERT_NE(c, nullptr) << pith_last_error();
        std::string dump = Dump(c.get());
        EXPECT_NE(dump.find("group of 3"), std::string::npos) << dump;
        EXPECT_NE(dump.find(", the last 2 dims)"), std::string::npos) << dump;
        Tensor rx = Random(shape, dtype, 115);
        Tensor eh = Eager1("layer_norm", {T(Eager1("tanh", {T(rx)})), Ints(normalized), T(rw),
                                          T(rb), D(1e-5), B(true)});
        Tensor e = Eager1("mul.Tensor", {T(eh), T(rx)});
        EXPECT_TRUE(BitEqual(RunGraph(c.get(), {rx.get()}, 1)[0].get(), e.get())) << dump;
    }
}

// scores = x * 0.125; p = softmax(scores, -1) (or log_softmax); p * 2 + x; sum over -1:
// the row members run eager's row kernel on each row in its tile buffer.
TEST_F(CompileTest, SoftmaxOverTheLastDimIsAMemberOfItsChain)
{
    for (const char *op : {"softmax.int", "log_softmax.int"})
        for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64})
            for (Shape shape : {Shape{4, 64, 64}, Shape{3, 1000}, Shape{2, 8192}, Shape{5, 2}}) {
                Graph g(pith_graph_new());
                Tensor x = Input(g.get(), dtype, shape);
                Tensor k(WrappedNumber(0.125, PITH_FLOAT64)), two(WrappedNumber(2, PITH_FLOAT64));
                Tensor a = Call1(g.get(), "mul.Tensor", {T(x), T(k)});
                Tensor p = Call1(g.get(), op, {T(a), I(-1), None()});
                Tensor q = Call1(g.get(), "mul.Tensor", {T(p), T(two)});
                Tensor r = Call1(g.get(), "add.Tensor", {T(q), T(x)});
                Tensor s = Call1(g.get(), "sum.dim_IntList", {T(r), Ints({-1}), B(false), None()});
                ASSERT_EQ(pith_graph_output(g.get(), s.get()), PITH_OK);
                ASSERT_EQ(pith_graph_output(g.get(), p.get()), PITH_OK);
                Compiled c(pith_graph_compile(g.get(), nullptr));
                ASSERT_NE(c, nullptr) << pith_last_error();
                std::string dump = Dump(c.get());
                if (shape.back() >= 256) {
                    EXPECT_NE(dump.find("1 steps, 0 buffers"), std::string::npos) << dump;
                    EXPECT_NE(dump.find("group of 5"), std::string::npos) << dump;
                } else { // short rows (Note [Fusion tiles])
                    EXPECT_EQ(dump.find("the last dim"), std::string::npos) << dump;
                }
                Tensor rx = Random(shape, dtype, 121);
                Tensor ea = Eager1("mul.Tensor", {T(rx), T(k)});
                Tensor ep = Eager1(op, {T(ea), I(-1), None()});
                Tensor eq = Eager1("mul.Tensor", {T(ep), T(two)});
                Tensor er = Eager1("add.Tensor", {T(eq), T(rx)});
                Tensor es = Eager1("sum.dim_IntList", {T(er), Ints({-1}), B(false), None()});
                std::vector<Tensor> out = RunGraph(c.get(), {rx.get()}, 2);
                EXPECT_TRUE(BitEqual(out[0].get(), es.get())) << op << "\n" << dump;
                EXPECT_TRUE(BitEqual(out[1].get(), ep.get())) << op << "\n" << dump;
            }
}

// x + o -> layer_norm(w, b) -> gelu: the pre-norm residual of a transformer block.
TEST_F(CompileTest, LayerNormOverTheLastDimIsAMemberOfItsChain)
{
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64})
        for (Shape shape : {Shape{1, 64, 256}, Shape{7, 3}, Shape{2, 5000}})
            for (bool affine : {true, false}) {
                int64_t c = shape.back();
                Tensor rw = Random({c}, dtype, 141), rb = Random({c}, dtype, 142);
                Graph g(pith_graph_new());
                Tensor x = Input(g.get(), dtype, shape), o = Input(g.get(), dtype, shape);
                Tensor w = Param(g.get(), rw), b = Param(g.get(), rb);
                Tensor x1 = Call1(g.get(), "add.Tensor", {T(x), T(o)});
                Tensor h = Call1(g.get(), "layer_norm",
                                 {T(x1), Ints({c}), affine ? T(w) : None(), affine ? T(b) : None(),
                                  D(1e-5), B(true)});
                Tensor y = Call1(g.get(), "gelu", {T(h), Str("none")});
                ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
                ASSERT_EQ(pith_graph_output(g.get(), x1.get()), PITH_OK);
                Compiled cg(pith_graph_compile(g.get(), nullptr));
                ASSERT_NE(cg, nullptr) << pith_last_error();
                std::string dump = Dump(cg.get());
                if (c >= 256) {
                    EXPECT_NE(dump.find("1 steps, 0 buffers"), std::string::npos) << dump;
                    EXPECT_NE(dump.find("group of 3"), std::string::npos) << dump;
                    EXPECT_EQ(dump.find("None") != std::string::npos, !affine) << dump;
                } else { // short rows (Note [Fusion tiles])
                    EXPECT_EQ(dump.find("the last dim"), std::string::npos) << dump;
                }
                Tensor rx = Random(shape, dtype, 143), ro = Random(shape, dtype, 144);
                Tensor ex1 = Eager1("add.Tensor", {T(rx), T(ro)});
                Tensor eh = Eager1("layer_norm", {T(ex1), Ints({c}), affine ? T(rw) : None(),
                                                  affine ? T(rb) : None(), D(1e-5), B(true)});
                Tensor ey = Eager1("gelu", {T(eh), Str("none")});
                std::vector<Tensor> out = RunGraph(cg.get(), {rx.get(), ro.get()}, 2);
                EXPECT_TRUE(BitEqual(out[0].get(), ey.get())) << dump;
                EXPECT_TRUE(BitEqual(out[1].get(), ex1.get())) << dump;
            }
}

TEST_F(CompileTest, LayerNormOverSeveralDimsOrWithAStridedWeightIsNotFused)
{
    Tensor base = Random({2, 16}, PITH_FLOAT32, 151);
    Tensor rw(pith_select(base.get(), 1, 0)); // 2 elements, stride 16
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {4, 3, 2});
    Tensor w = Param(g.get(), rw);
    Tensor a = Call1(g.get(), "exp", {T(x)});
    Tensor h0 = Call1(g.get(), "layer_norm", {T(a), Ints({3, 2}), None(), None(), D(1e-5), B(true)});
    Tensor b = Call1(g.get(), "neg", {T(x)});
    Tensor h1 = Call1(g.get(), "layer_norm", {T(b), Ints({2}), T(w), None(), D(1e-5), B(true)});
    ASSERT_EQ(pith_graph_output(g.get(), h0.get()), PITH_OK);
    ASSERT_EQ(pith_graph_output(g.get(), h1.get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    std::string dump = Dump(c.get());
    EXPECT_EQ(dump.find("group"), std::string::npos) << dump;
    Tensor rx = Random({4, 3, 2}, PITH_FLOAT32, 152);
    std::vector<Tensor> out = RunGraph(c.get(), {rx.get()}, 2);
    Tensor ea = Eager1("exp", {T(rx)}), eb = Eager1("neg", {T(rx)});
    EXPECT_TRUE(BitEqual(out[0].get(), Eager1("layer_norm", {T(ea), Ints({3, 2}), None(), None(),
                                                             D(1e-5), B(true)})
                                           .get()));
    EXPECT_TRUE(BitEqual(out[1].get(), Eager1("layer_norm", {T(eb), Ints({2}), T(rw), None(),
                                                             D(1e-5), B(true)})
                                           .get()));
}

TEST_F(CompileTest, SoftmaxOverAnotherDimOrWithADtypeIsNotFused)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {8, 16});
    Tensor a = Call1(g.get(), "exp", {T(x)});
    Tensor p0 = Call1(g.get(), "softmax.int", {T(a), I(0), None()}); // not the last dim
    Tensor b = Call1(g.get(), "neg", {T(x)});
    Stack st = Push({T(b), I(-1)});
    pith_stack_push_dtype(st.get(), PITH_FLOAT64);                     // converts first
    ASSERT_EQ(pith_graph_call(g.get(), Op("softmax.int"), st.get()), PITH_OK) << pith_last_error();
    Tensor p1(pith_stack_get_tensor(st.get(), 0));
    Tensor p2 = Call1(g.get(), "softmax.int", {T(x), I(-1), None()}); // an input: no chain
    for (const Tensor *out : {&p0, &p1, &p2})
        ASSERT_EQ(pith_graph_output(g.get(), out->get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    std::string dump = Dump(c.get());
    EXPECT_EQ(dump.find("group"), std::string::npos) << dump;
    EXPECT_EQ(Count(dump, "out softmax.int_out"), 3u) << dump;
    Tensor rx = Random({8, 16}, PITH_FLOAT32, 131);
    std::vector<Tensor> out = RunGraph(c.get(), {rx.get()}, 3);
    Tensor ea = Eager1("exp", {T(rx)});
    EXPECT_TRUE(BitEqual(out[0].get(), Eager1("softmax.int", {T(ea), I(0), None()}).get()));
    Tensor eb = Eager1("neg", {T(rx)});
    Stack es = Push({T(eb), I(-1)});
    pith_stack_push_dtype(es.get(), PITH_FLOAT64);
    ASSERT_EQ(pith_call_boxed(Op("softmax.int"), es.get()), PITH_OK) << pith_last_error();
    Tensor e1(pith_stack_get_tensor(es.get(), 0));
    EXPECT_TRUE(BitEqual(out[1].get(), e1.get()));
    EXPECT_TRUE(BitEqual(out[2].get(), Eager1("softmax.int", {T(rx), I(-1), None()}).get()));
}

TEST_F(CompileTest, ReductionsThatAreNotRootsStayOutSteps)
{
    // Over the first dim, over a row longer than a tile, and with dtype=float64.
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {6, 10000});
    Tensor a = Call1(g.get(), "exp", {T(x)});
    Tensor b = Call1(g.get(), "neg", {T(a)});
    Tensor r0 = Call1(g.get(), "sum.dim_IntList", {T(b), Ints({0}), B(false), None()});
    Tensor c1 = Call1(g.get(), "tanh", {T(x)});
    Tensor d = Call1(g.get(), "neg", {T(c1)});
    Tensor r1 = Call1(g.get(), "sum.dim_IntList", {T(d), Ints({-1}), B(false), None()});
    Tensor e1 = Call1(g.get(), "sigmoid", {T(x)});
    Tensor f1 = Call1(g.get(), "neg", {T(e1)});
    Stack st = Push({T(f1), Ints({-1}), B(false)});
    pith_stack_push_dtype(st.get(), PITH_FLOAT64);
    ASSERT_EQ(pith_graph_call(g.get(), Op("sum.dim_IntList"), st.get()), PITH_OK)
        << pith_last_error();
    Tensor r2(pith_stack_get_tensor(st.get(), 0));
    for (const Tensor *out : {&r0, &r1, &r2})
        ASSERT_EQ(pith_graph_output(g.get(), out->get()), PITH_OK);
    Compiled c(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(c, nullptr) << pith_last_error();
    std::string dump = Dump(c.get());
    EXPECT_EQ(Count(dump, ": group of 2,"), 3u) << dump;
    EXPECT_EQ(Count(dump, "out sum.IntList_out"), 3u) << dump;
    Tensor rx = Random({6, 10000}, PITH_FLOAT32, 111);
    std::vector<Tensor> out = RunGraph(c.get(), {rx.get()}, 3);
    Tensor e0 = Eager1("sum.dim_IntList", {T(Eager1("neg", {T(Eager1("exp", {T(rx)}))})),
                                           Ints({0}), B(false), None()});
    Tensor ee1 = Eager1("sum.dim_IntList", {T(Eager1("neg", {T(Eager1("tanh", {T(rx)}))})),
                                            Ints({-1}), B(false), None()});
    Tensor esig = Eager1("sigmoid", {T(rx)});
    Tensor eneg = Eager1("neg", {T(esig)});
    Stack es = Push({T(eneg), Ints({-1}), B(false)});
    pith_stack_push_dtype(es.get(), PITH_FLOAT64);
    ASSERT_EQ(pith_call_boxed(Op("sum.dim_IntList"), es.get()), PITH_OK) << pith_last_error();
    Tensor ee2(pith_stack_get_tensor(es.get(), 0));
    EXPECT_TRUE(BitEqual(out[0].get(), e0.get()));
    EXPECT_TRUE(BitEqual(out[1].get(), ee1.get()));
    EXPECT_TRUE(BitEqual(out[2].get(), ee2.get()));
}

TEST_F(CompileTest, OlderOptionStructsKeepTheNewFieldsDefaults)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT32, {16});
    Tensor a = Call1(g.get(), "exp", {T(x)});
    Tensor b = Call1(g.get(), "neg", {T(a)});
    ASSERT_EQ(pith_graph_output(g.get(), b.get()), PITH_OK);
    pith_compile_options opts = Unfused();
    opts.struct_size = offsetof(pith_compile_options, arena_pool) + sizeof(int); // no `fuse`
    Compiled c(pith_graph_compile(g.get(), &opts));
    ASSERT_NE(c, nullptr) << pith_last_error();
    EXPECT_NE(Dump(c.get()).find("group of 2"), std::string::npos) << Dump(c.get());
}

// ---- GEMM epilogues (Note [GEMM epilogues], compile/fusion.c) ----

// Sets pith's thread count for a scope.
struct Threads {
    int saved = pith_get_num_threads();
    explicit Threads(int n) { pith_set_num_threads(n); }
    ~Threads() { pith_set_num_threads(saved); }
};

// Whether the BLAS in this process allows column panels: every build but OpenBLAS's pthread
// one, whose pool would be entered from every thread at once (Note [GEMM panels]). ctest
// runs the GEMM epilogue tests under both builds (tests/compile/run_under_pthread_blas.sh).
bool BlasAllowsPanels()
{
    return pith_blas_get_threading() != PITH_BLAS_PTHREADS;
}

// linear + bias, then GELU, then a residual add: x + gelu(x W^T + b), x [batch, d], with
// the product's result an output too. 784 columns of A is where OpenBLAS's bits depend on
// the split (Note [GEMM panels]).
TEST_F(CompileTest, ALinearWithBiasGeluAndResidualIsOneGroupBitwiseEqualToEager)
{
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64})
        for (int threads : {1, 2})
            for (int64_t k : {256, 784})
                for (int64_t batch : {1, 32, 256}) {
                    Threads t(threads);
                    const int64_t n = 256;
                    Tensor rw = Random({n, k}, dtype, 161), rb = Random({n}, dtype, 162);
                    Tensor rr = Random({batch, n}, dtype, 163);
                    Graph g(pith_graph_new());
                    Tensor x = Input(g.get(), dtype, {batch, k});
                    Tensor r = Input(g.get(), dtype, {batch, n});
                    Tensor w = Param(g.get(), rw), b = Param(g.get(), rb);
                    Tensor h = Call1(g.get(), "linear", {T(x), T(w), T(b)});
                    Tensor a = Call1(g.get(), "gelu", {T(h), Str("none")});
                    Tensor y = Call1(g.get(), "add.Tensor", {T(r), T(a)});
                    ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
                    ASSERT_EQ(pith_graph_output(g.get(), h.get()), PITH_OK);
                    Compiled cg(pith_graph_compile(g.get(), nullptr));
                    ASSERT_NE(cg, nullptr) << pith_last_error();
                    std::string dump = Dump(cg.get());
                    EXPECT_NE(dump.find("1 steps"), std::string::npos) << dump;
                    EXPECT_NE(dump.find("group of 3 (a GEMM and its epilogue)"),
                              std::string::npos)
                        << dump;
                    // Panels only for few rows, at two threads, and not with the pthread
                    // build (Note [GEMM panels]).
                    bool panels = BlasAllowsPanels() && threads == 2 && batch == 32;
                    EXPECT_EQ(dump.find("2 column panels") != std::string::npos, panels) << dump;
                    // The product is an output: it keeps its own buffer.
                    EXPECT_EQ(dump.find("'s buffer]"), std::string::npos) << dump;
                    for (uint64_t seed : {164, 165}) {
                        Tensor rx = Random({batch, k}, dtype, seed);
                        Tensor eh = Eager1("linear", {T(rx), T(rw), T(rb)});
                        Tensor ea = Eager1("gelu", {T(eh), Str("none")});
                        Tensor ey = Eager1("add.Tensor", {T(rr), T(ea)});
                        std::vector<Tensor> out = RunGraph(cg.get(), {rx.get(), rr.get()}, 2);
                        EXPECT_TRUE(BitEqual(out[0].get(), ey.get()))
                            << "batch " << batch << ", k " << k << ", " << threads
                            << " threads\n" << dump;
                        EXPECT_TRUE(BitEqual(out[1].get(), eh.get()));
                    }
                }
}

// addmm, mm and matmul heads; an addend broadcast along rows or columns; beta 0 (the addend
// is not read: its nan does not reach the result); a 3-D input folded into rows.
TEST_F(CompileTest, ProductHeadsOfEveryKindMatchEagerBitwise)
{
    Threads t(2);
    const double nan = std::nan("");
    struct Case {
        const char *op;
        Shape a, b, addend;
        double beta, alpha;
    };
    for (const Case &cs : std::vector<Case>{
             {"addmm", {32, 300}, {300, 512}, {512}, 1.0, 1.0},
             {"addmm", {32, 300}, {300, 512}, {32, 1}, 0.5, 2.0},
             {"addmm", {32, 300}, {300, 512}, {32, 512}, 0.0, 1.0},
             {"mm", {16, 128}, {128, 640}, {}, 0, 0},
             {"matmul", {2, 16, 256}, {256, 512}, {}, 0, 0},
             {"matmul", {256}, {256, 512}, {}, 0, 0},
             {"linear", {2, 8, 256}, {512, 256}, {512}, 0, 0},
         }) {
        bool has_addend = !cs.addend.empty();
        Tensor ra = Random(cs.a, PITH_FLOAT32, 171), rb = Random(cs.b, PITH_FLOAT32, 172);
        Tensor rc = has_addend ? Random(cs.addend, PITH_FLOAT32, 173) : Tensor();
        if (has_addend && cs.beta == 0.0)
            rc = Tensor(pith_full((int)cs.addend.size(), cs.addend.data(), nan, PITH_FLOAT32));
        Graph g(pith_graph_new());
        Tensor a = Input(g.get(), PITH_FLOAT32, cs.a);
        Tensor b = Param(g.get(), rb);
        Tensor c = has_addend ? Param(g.get(), rc) : Tensor();
        std::vector<Arg> args, eager;
        if (std::string(cs.op) == "addmm") {
            args = {T(c), T(a), T(b), D(cs.beta), D(cs.alpha)};
            eager = {T(rc), T(ra), T(rb), D(cs.beta), D(cs.alpha)};
        } else if (std::string(cs.op) == "linear") {
            args = {T(a), T(b), T(c)};
            eager = {T(ra), T(rb), T(rc)};
        } else {
            args = {T(a), T(b)};
            eager = {T(ra), T(rb)};
        }
        Tensor h = Call1(g.get(), cs.op, args);
        Tensor y = Call1(g.get(), "tanh", {T(h)});
        ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
        Compiled cg(pith_graph_compile(g.get(), nullptr));
        ASSERT_NE(cg, nullptr) << pith_last_error();
        std::string dump = Dump(cg.get());
        EXPECT_NE(dump.find("(a GEMM and its epilogue)"), std::string::npos) << cs.op << dump;
        // Only tanh reads the product: it is written into tanh's result, computed in place.
        EXPECT_EQ(Count(dump, "'s buffer]"), 1u) << dump;
        EXPECT_EQ(Count(dump, "arena buffer"), 0u) << dump;
        Tensor ey = Eager1("tanh", {T(Eager1(cs.op, eager))});
        std::vector<Tensor> out = RunGraph(cg.get(), {ra.get()}, 1);
        EXPECT_TRUE(BitEqual(out[0].get(), ey.get())) << cs.op << "\n" << dump;
        // Every one has few rows and many columns, so panels at two threads (not with the
        // pthread build), but the GEMV of one row is too small to be worth a second thread.
        bool panels = BlasAllowsPanels() && cs.a.size() != 1;
        EXPECT_EQ(dump.find("2 column panels") != std::string::npos, panels) << dump;
        EXPECT_EQ(dump.find("one call, then the epilogue") != std::string::npos, !panels)
            << dump;
    }
}

// A product whose result is not contiguous in its own order, or of an integer dtype, or
// whose rows are short, is left to its out step.
TEST_F(CompileTest, ProductsThatCannotHeadAGroupAreNotFused)
{
    for (pith_dtype dtype : {PITH_INT64, PITH_FLOAT32}) {
        int64_t cols = dtype == PITH_INT64 ? 256 : 64; // 64: tiles too short
        Graph g(pith_graph_new());
        Tensor x = Input(g.get(), dtype, {8, 32});
        Tensor w = Input(g.get(), dtype, {32, cols});
        Tensor h = Call1(g.get(), "mm", {T(x), T(w)});
        Tensor y = Call1(g.get(), "neg", {T(h)});
        ASSERT_EQ(pith_graph_output(g.get(), y.get()), PITH_OK);
        Compiled cg(pith_graph_compile(g.get(), nullptr));
        ASSERT_NE(cg, nullptr) << pith_last_error();
        std::string dump = Dump(cg.get());
        EXPECT_EQ(dump.find("GEMM"), std::string::npos) << dump;
        EXPECT_NE(dump.find("out mm.out"), std::string::npos) << dump;
    }
}

// ---- casts in groups ----

// x.to(dtype) through the graph (g) or eagerly (g NULL).
Tensor To(pith_graph *g, const Tensor &x, pith_dtype dtype)
{
    Stack st = Push({T(x)});
    pith_stack_push_dtype(st.get(), dtype);
    pith_stack_push_bool(st.get(), false);
    pith_stack_push_bool(st.get(), false);
    pith_status s = g ? pith_graph_call(g, Op("to.dtype"), st.get())
                      : pith_call_boxed(Op("to.dtype"), st.get());
    EXPECT_EQ(s, PITH_OK) << pith_last_error();
    std::vector<Tensor> r = Results(st.get());
    return r.empty() ? Tensor() : std::move(r[0]);
}

// An explicit cast is a member, and an input of another dtype than its member's loop reads
// (type promotion: float64 * float32, a broadcast row) is converted tile by tile.
TEST_F(CompileTest, CastsAndPromotedInputsAreFusedBitwiseEqualToEager)
{
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT16, PITH_BFLOAT16, PITH_INT32})
        for (Shape shape : {Shape{4, 512}, Shape{3, 5, 700}}) {
            Shape row = {shape.back()};
            Graph g(pith_graph_new());
            Tensor x = Input(g.get(), dtype, shape);
            Tensor y = Input(g.get(), PITH_FLOAT64, shape);
            Tensor r = Input(g.get(), PITH_FLOAT32, row);
            bool floating = dtype != PITH_INT32;
            Tensor a = floating ? Call1(g.get(), "exp", {T(x)}) : Call1(g.get(), "neg", {T(x)});
            Tensor c = To(g.get(), a, PITH_FLOAT64);
            Tensor d = Call1(g.get(), "mul.Tensor", {T(c), T(y)});
            Tensor e = Call1(g.get(), "add.Tensor", {T(d), T(r)}); // r broadcast, promoted
            Tensor f = To(g.get(), e, PITH_FLOAT32);
            ASSERT_EQ(pith_graph_output(g.get(), f.get()), PITH_OK);
            Compiled cg(pith_graph_compile(g.get(), nullptr));
            ASSERT_NE(cg, nullptr) << pith_last_error();
            std::string dump = Dump(cg.get());
            // neg of int32 is an integer loop: it stays an out step, and the cast reads it.
            EXPECT_NE(dump.find(floating ? "1 steps" : "2 steps"), std::string::npos) << dump;
            EXPECT_NE(dump.find("%2 (as float64"), std::string::npos) << dump; // r
            EXPECT_EQ(Count(dump, "to.dtype("), 2u) << dump;
            Tensor rx = floating ? Random(shape, dtype, 181)
                                 : Tensor(pith_to_dtype(Random(shape, PITH_FLOAT32, 181).get(),
                                                        PITH_INT32));
            Tensor ry = Random(shape, PITH_FLOAT64, 182), rr = Random(row, PITH_FLOAT32, 183);
            Tensor ea = floating ? Eager1("exp", {T(rx)}) : Eager1("neg", {T(rx)});
            Tensor ee = Eager1("add.Tensor",
                               {T(Eager1("mul.Tensor", {T(To(nullptr, ea, PITH_FLOAT64)), T(ry)})),
                                T(rr)});
            Tensor ef = To(nullptr, ee, PITH_FLOAT32);
            std::vector<Tensor> out = RunGraph(cg.get(), {rx.get(), ry.get(), rr.get()}, 1);
            EXPECT_TRUE(BitEqual(out[0].get(), ef.get())) << dump;
        }
}

// Another reference to `t`.
Tensor Share(const Tensor &t)
{
    pith_retain(t.get());
    return Tensor(t.get());
}

// clamp (with either bound absent) and where (its condition a member's result, or a uint8
// input read as bool) are members.
TEST_F(CompileTest, ClampAndWhereAreMembersBitwiseEqualToEager)
{
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64})
        for (bool mask_input : {false, true})
            for (int bounds = 0; bounds < 3; bounds++) {
                Shape shape = {3, 700};
                Graph g(pith_graph_new());
                Tensor x = Input(g.get(), dtype, shape), y = Input(g.get(), dtype, shape);
                Tensor m = Input(g.get(), PITH_UINT8, shape);
                Tensor two(WrappedNumber(2.0, PITH_FLOAT64));
                Arg lo = bounds == 1 ? None() : D(-1.0), hi = bounds == 2 ? None() : D(0.75);
                Tensor a = Call1(g.get(), "mul.Tensor", {T(x), T(two)});
                Tensor b = Call1(g.get(), "clamp", {T(a), lo, hi});
                Tensor cnd = mask_input ? Share(m) : Call1(g.get(), "lt.Tensor", {T(x), T(y)});
                Tensor d = Call1(g.get(), "where.self", {T(cnd), T(b), T(y)});
                Tensor e = Call1(g.get(), "add.Tensor", {T(d), T(x)});
                ASSERT_EQ(pith_graph_output(g.get(), e.get()), PITH_OK);
                Compiled cg(pith_graph_compile(g.get(), nullptr));
                ASSERT_NE(cg, nullptr) << pith_last_error();
                std::string dump = Dump(cg.get());
                EXPECT_NE(dump.find("1 steps, 0 buffers"), std::string::npos) << dump;
                EXPECT_NE(dump.find(mask_input ? "group of 4" : "group of 5"),
                          std::string::npos)
                    << dump;
                EXPECT_EQ(dump.find("(as bool") != std::string::npos, mask_input) << dump;
                Tensor rx = Random(shape, dtype, 201), ry = Random(shape, dtype, 202);
                Tensor rm(pith_to_dtype(Eager1("gt.Tensor", {T(rx), T(ry)}).get(), PITH_UINT8));
                Tensor eb = Eager1("clamp", {T(Eager1("mul.Tensor", {T(rx), T(two)})), lo, hi});
                Tensor ec = mask_input ? Share(rm) : Eager1("lt.Tensor", {T(rx), T(ry)});
                Tensor ee = Eager1("add.Tensor",
                                   {T(Eager1("where.self", {T(ec), T(eb), T(ry)})), T(rx)});
                std::vector<Tensor> out =
                    RunGraph(cg.get(), {rx.get(), ry.get(), rm.get()}, 1);
                EXPECT_TRUE(BitEqual(out[0].get(), ee.get())) << dump;
            }
}

// At most GROUP_MAX_CASTS inputs are converted per group: a third ends the group.
TEST_F(CompileTest, AThirdConvertedInputEndsTheGroup)
{
    Graph g(pith_graph_new());
    Tensor x = Input(g.get(), PITH_FLOAT64, {2, 512});
    std::vector<Tensor> ins;
    for (int k = 0; k < 3; k++)
        ins.push_back(Input(g.get(), PITH_FLOAT32, {2, 512}));
    Tensor h = Call1(g.get(), "exp", {T(x)});
    for (int k = 0; k < 3; k++)
        h = Call1(g.get(), "add.Tensor", {T(h), T(ins[(size_t)k])});
    ASSERT_EQ(pith_graph_output(g.get(), h.get()), PITH_OK);
    Compiled cg(pith_graph_compile(g.get(), nullptr));
    ASSERT_NE(cg, nullptr) << pith_last_error();
    std::string dump = Dump(cg.get());
    EXPECT_NE(dump.find("group of 3"), std::string::npos) << dump;
    EXPECT_EQ(Count(dump, "(as float64"), 2u) << dump;
    EXPECT_NE(dump.find("out add.out"), std::string::npos) << dump;
    Tensor rx = Random({2, 512}, PITH_FLOAT64, 191);
    std::vector<Tensor> rin;
    std::vector<const pith_tensor *> args = {rx.get()};
    for (int k = 0; k < 3; k++) {
        rin.push_back(Random({2, 512}, PITH_FLOAT32, 192 + (uint64_t)k));
        args.push_back(rin.back().get());
    }
    Tensor e = Eager1("exp", {T(rx)});
    for (int k = 0; k < 3; k++)
        e = Eager1("add.Tensor", {T(e), T(rin[(size_t)k])});
    std::vector<Tensor> out = RunGraph(cg.get(), args, 1);
    EXPECT_TRUE(BitEqual(out[0].get(), e.get())) << dump;
}

TEST(CompileConcurrency, ThreadsRunOneFusedGraphAtOnce)
{
    const size_t live = pith_live_tensors();
    {
        const int kThreads = 4, kRuns = 20;
        Shape shape{70000}; // above the grain size: each run has a region of its own
        Tensor rw = Random(shape, PITH_FLOAT32, 81), rb = Random(shape, PITH_FLOAT32, 82);
        CompiledChain cc(PITH_FLOAT32, shape, rw, rb);
        Compiled &c = cc.c;
        ASSERT_NE(c, nullptr);
        std::vector<Tensor> inputs, expected;
        for (int i = 0; i < kThreads; i++) {
            inputs.push_back(Random(shape, PITH_FLOAT32, 90 + (uint64_t)i));
            Chain eager;
            expected.push_back(eager.Build(nullptr, inputs.back(), rw, rb));
        }
        std::vector<int> failures(kThreads, 0);
        std::vector<std::thread> threads;
        for (int i = 0; i < kThreads; i++)
            threads.emplace_back([&, i] {
                for (int r = 0; r < kRuns; r++) {
                    pith_tensor *in = inputs[(size_t)i].get(), *out = nullptr;
                    if (pith_compiled_run(c.get(), &in, 1, &out, 1) != PITH_OK ||
                        !BitEqual(out, expected[(size_t)i].get()))
                        failures[(size_t)i]++;
                    pith_release(out);
                }
            });
        for (std::thread &t : threads)
            t.join();
        for (int i = 0; i < kThreads; i++)
            EXPECT_EQ(failures[(size_t)i], 0) << "thread " << i;
    }
    EXPECT_EQ(pith_live_tensors(), live);
}

}  // namespace
