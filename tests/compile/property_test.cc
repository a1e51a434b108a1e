// property_test.cc — seeded random programs, each built twice from the same calls: run
// eagerly through pith_call_boxed on real tensors, and recorded with pith_graph_call on
// stand-ins, then compiled and run. Every output, and every input that the program mutates,
// must equal the eager one bitwise, with the passes on or off and on a second run; a call
// that fails eagerly must fail in the graph with the same status. Numbers come as Scalar
// arguments, as 0-dim params, and as 0-dim wrapped numbers (the graph's constants).
//
// A failure prints the seed, the program and the graph's dump. To rerun one program:
//   PITH_PROPERTY_SEED=<seed> test_compile --gtest_filter='CompiledGraphProperty.*'
// PITH_PROPERTY_SEEDS=<n> runs seeds 1..n instead of the default count, and
// PITH_PROPERTY_VERBOSE=1 prints every program.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>

#include "eager_oracle.h"
#include "pith/interpreter.h" /* pith_tensor_set_wrapped_number */

namespace {

using eager_oracle::BitwiseMismatch;
using eager_oracle::CopyWithLayout;
using eager_oracle::Describe;
using eager_oracle::Graph;
using eager_oracle::GraphDump;
using eager_oracle::Rng;
using eager_oracle::ShapeText;
using eager_oracle::SizesOf;
using eager_oracle::Stack;
using eager_oracle::StridesOf;
using eager_oracle::Tensor;

constexpr int kDefaultSeeds = 500;

// One argument of a call, pushed on the eager stack as a real tensor or value and on the
// graph's stack as the matching stand-in or the same value.
struct Arg {
    enum Kind { VALUE, PARAM, CONSTANT, INT, DOUBLE, BOOL, NONE, INT_LIST, DTYPE } kind = NONE;
    // VALUE: into Program::values_; PARAM: into Program::params_; CONSTANT: constants_
    size_t index = 0;
    int64_t i = 0;
    double d = 0;
    bool b = false;
    std::vector<int64_t> list;
};
Arg ValueArg(size_t v) { Arg a; a.kind = Arg::VALUE; a.index = v; return a; }
Arg ParamArg(size_t p) { Arg a; a.kind = Arg::PARAM; a.index = p; return a; }
Arg ConstantArg(size_t c) { Arg a; a.kind = Arg::CONSTANT; a.index = c; return a; }
Arg IntArg(int64_t i) { Arg a; a.kind = Arg::INT; a.i = i; return a; }
Arg DoubleArg(double d) { Arg a; a.kind = Arg::DOUBLE; a.d = d; return a; }
Arg BoolArg(bool b) { Arg a; a.kind = Arg::BOOL; a.b = b; return a; }
Arg NoneArg() { return Arg(); }
Arg DtypeArg(pith_dtype d) { Arg a; a.kind = Arg::DTYPE; a.i = d; return a; }
Arg ListArg(std::vector<int64_t> l) { Arg a; a.kind = Arg::INT_LIST; a.list = std::move(l); return a; }

struct Step {
    std::string op;
    std::vector<Arg> args;
    bool makes_view = false;
};

// A graph value: the eager tensor (mutated as the eager program runs) and its stand-in.
struct Value {
    Tensor real;
    Tensor standin;
    bool from_view = false;
    bool is_input = false;
};

// A tensor the graph holds by reference: the same tensor for eager and every run.
struct Param {
    Tensor real;
    Tensor standin;
};

// Which compilations a check runs.
struct CompileCase {
    const char *label;
    bool defaults;  // NULL options
    bool dce, cse, plan_memory;
    int arena_pool;
    bool fuse = true;
};

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t> &sizes)
{
    std::vector<int64_t> strides(sizes.size());
    int64_t s = 1;
    for (size_t k = sizes.size(); k-- > 0;) {
        strides[k] = s;
        s *= std::max<int64_t>(sizes[k], 1);
    }
    return strides;
}

const char *DtypeShort(pith_dtype d) { return pith_dtype_name(d); }

class Program {
public:
    explicit Program(uint64_t seed) : seed_(seed), rng_(seed ^ 0x9e3779b97f4a7c15ull) {}

    // Makes the inputs, runs and records the steps, and marks the outputs. False (with
    // failures_ set) when the graph disagreed with eager while it was being built.
    bool Build()
    {
        graph_.reset(pith_graph_new());
        if (!graph_)
            return Fail(std::string("pith_graph_new failed: ") + pith_last_error());
        MakeInputs();
        if (!failures_.empty())
            return false;
        int nsteps = (int)rng_.Range(5, 25);
        for (int k = 0; k < nsteps && failures_.empty(); k++)
            RandomStep();
        if (!failures_.empty())
            return false;
        MarkOutputs();
        return failures_.empty();
    }

    // Compiles with `cc`, runs twice on fresh copies of the original inputs, and compares
    // the outputs and the inputs afterwards with eager's.
    bool CheckCompiled(const CompileCase &cc)
    {
        pith_compile_options opts;
        pith_compile_options_init(&opts);
        opts.dce = cc.dce;
        opts.cse = cc.cse;
        opts.plan_memory = cc.plan_memory;
        opts.arena_pool = cc.arena_pool;
        opts.fuse = cc.fuse;
        eager_oracle::Compiled c(pith_graph_compile(graph_.get(), cc.defaults ? nullptr : &opts));
        if (!c)
            return Fail(std::string(cc.label) + ": pith_graph_compile failed: " +
                        pith_last_error());
        compiled_dump_ = eager_oracle::CompiledDump(c.get());
        if (pith_compiled_num_inputs(c.get()) != (int)inputs_.size() ||
            pith_compiled_num_outputs(c.get()) != (int)outputs_.size())
            return Fail(std::string(cc.label) + ": the compiled graph has " +
                        std::to_string(pith_compiled_num_inputs(c.get())) + " inputs and " +
                        std::to_string(pith_compiled_num_outputs(c.get())) + " outputs");
        std::vector<std::vector<Tensor>> kept_outputs;
        std::vector<std::vector<Tensor>> kept_inputs;
        for (int run = 0; run < 2; run++) {
            std::vector<Tensor> in;
            std::vector<pith_tensor *> in_raw;
            for (const Tensor &orig : originals_) {
                in.push_back(CopyWithLayout(orig.get()));
                in_raw.push_back(in.back().get());
            }
            std::vector<pith_tensor *> out(outputs_.size(), nullptr);
            pith_status s = pith_compiled_run(c.get(), in_raw.data(), (int)in_raw.size(),
                                              out.data(), (int)out.size());
            std::vector<Tensor> owned;
            for (pith_tensor *t : out)
                owned.emplace_back(t);
            std::string where = std::string(cc.label) + ", run " + std::to_string(run + 1);
            if (s != PITH_OK)
                return Fail(where + ": pith_compiled_run failed: " + pith_last_error());
            CompareOutputs(where, owned);
            CompareInputs(where, in);
            kept_outputs.push_back(std::move(owned));
            kept_inputs.push_back(std::move(in));
        }
        // The first run's results belong to the caller: the second run may not touch them.
        CompareOutputs(std::string(cc.label) + ", run 1 after run 2", kept_outputs[0]);
        return failures_.empty();
    }

    std::string Report() const
    {
        std::ostringstream out;
        out << "seed " << seed_ << " (rerun: PITH_PROPERTY_SEED=" << seed_ << ")\n";
        for (const std::string &f : failures_)
            out << "  FAILURE: " << f << "\n";
        out << "program:\n" << log_.str();
        out << "graph dump:\n" << (graph_ ? GraphDump(graph_.get()) : "(none)") << "\n";
        if (!compiled_dump_.empty())
            out << "compiled dump (last compiled):\n" << compiled_dump_ << "\n";
        return out.str();
    }

    int ok_steps() const { return ok_steps_; }
    const std::string &compiled_dump() const { return compiled_dump_; }
    int failed_steps() const { return failed_steps_; }
    int inplace_steps() const { return inplace_steps_; }
    bool has_failures() const { return !failures_.empty(); }

private:
    bool Fail(const std::string &what)
    {
        failures_.push_back(what);
        return false;
    }

    // ---- inputs and constants ----------------------------------------------------------

    pith_dtype RandomDtype()
    {
        static const std::vector<pith_dtype> dtypes = {PITH_FLOAT32, PITH_FLOAT32, PITH_FLOAT64,
                                                       PITH_INT64, PITH_BOOL};
        return rng_.Pick(dtypes);
    }

    // 1-3 inputs whose sizes are suffixes of one broadcast shape with some dims set to 1;
    // some of them strided: permuted, or every other element.
    void MakeInputs()
    {
        static const std::vector<int> ranks = {0, 1, 1, 2, 2, 2, 3, 3, 3};
        int rank = rng_.Pick(ranks);
        std::vector<int64_t> base((size_t)rank);
        for (int64_t &s : base)
            s = rng_.Chance(0.04) ? 0 : rng_.Range(1, 5);
        // Now and then one long dim, for the kernels' vector loops and threads.
        static const std::vector<int64_t> long_dims = {31, 33, 64, 257, 1000};
        if (rank > 0 && rng_.Chance(0.15))
            base[(size_t)rng_.Range(0, rank - 1)] = rng_.Pick(long_dims);
        int ninputs = (int)rng_.Range(1, 3);
        for (int k = 0; k < ninputs; k++) {
            pith_dtype dtype = RandomDtype();
            int ndim = (int)rng_.Range(0, rank);
            std::vector<int64_t> sizes(base.end() - ndim, base.end());
            for (int64_t &s : sizes)
                if (rng_.Chance(0.25))
                    s = 1;
            std::vector<int64_t> strides = ContiguousStrides(sizes);
            const char *layout = "contiguous";
            double r = rng_.Uniform();
            if (ndim >= 2 && r < 0.3) {
                layout = "permuted";
                std::vector<int> perm((size_t)ndim);
                std::iota(perm.begin(), perm.end(), 0);
                for (int i = ndim - 1; i > 0; i--)
                    std::swap(perm[(size_t)i], perm[(size_t)rng_.Range(0, i)]);
                int64_t s = 1;
                for (int i = ndim - 1; i >= 0; i--) {
                    strides[(size_t)perm[(size_t)i]] = s;
                    s *= std::max<int64_t>(sizes[(size_t)perm[(size_t)i]], 1);
                }
            } else if (ndim >= 1 && r < 0.5) {
                layout = "every other element";
                for (int64_t &s : strides)
                    s *= 2;
            }
            bool pass_strides = std::string(layout) != "contiguous" || rng_.Chance(0.5);
            Value v;
            v.is_input = true;
            v.standin.reset(pith_graph_input(graph_.get(), dtype, ndim, sizes.data(),
                                             pass_strides ? strides.data() : nullptr));
            Tensor orig(pith_empty_strided(ndim, sizes.data(), strides.data(), dtype, PITH_CPU));
            if (!v.standin || !orig) {
                Fail(std::string("making an input failed: ") + pith_last_error());
                return;
            }
            eager_oracle::FillRandom(orig.get(), rng_);
            v.real = CopyWithLayout(orig.get());
            if (SizesOf(v.standin.get()) != sizes || pith_tensor_dtype(v.standin.get()) != dtype ||
                pith_tensor_device(v.standin.get()) != PITH_META) {
                Fail("input stand-in is " + Describe(v.standin.get()));
                return;
            }
            log_ << "  v" << values_.size() << " = input " << inputs_.size() << ": "
                 << DtypeShort(dtype) << ShapeText(sizes) << " strides " << ShapeText(strides)
                 << " (" << layout << ")\n";
            inputs_.push_back(values_.size());
            values_.push_back(std::move(v));
            originals_.push_back(std::move(orig));
        }
    }

    size_t AddParam(Tensor real)
    {
        Param p;
        p.standin.reset(pith_graph_param(graph_.get(), real.get()));
        if (!p.standin)
            Fail(std::string("pith_graph_param failed: ") + pith_last_error());
        log_ << "  p" << params_.size() << " = param " << Describe(real.get());
        if (pith_numel(real.get()) == 1) {
            double x = 0;
            pith_item(real.get(), &x);
            log_ << " = " << x;
        }
        log_ << "\n";
        p.real = std::move(real);
        params_.push_back(std::move(p));
        return params_.size() - 1;
    }

    Tensor RandomScalar()
    {
        pith_dtype dtype = RandomDtype();
        double v = dtype == PITH_BOOL ? (double)rng_.Range(0, 1)
                   : dtype == PITH_INT64 ? (double)rng_.Range(-3, 3)
                                         : (double)rng_.Range(-12, 12) / 4.0;
        return Tensor(pith_scalar_tensor(v, dtype));
    }

    // A 0-dim tensor held by reference, read at every run.
    size_t ScalarParam() { return AddParam(RandomScalar()); }

    // A 0-dim wrapped number (as Python's `x * 0.5` makes): a constant, taken by value. The
    // same tensor goes on both stacks.
    size_t Constant()
    {
        Tensor t = RandomScalar();
        if (rng_.Chance(0.5)) {
            pith_tensor *d = pith_to_dtype(t.get(), rng_.Chance(0.5) ? PITH_FLOAT64 : PITH_INT64);
            t.reset(d);
        }
        pith_tensor_set_wrapped_number(t.get(), true);
        double x = 0;
        pith_item(t.get(), &x);
        log_ << "  c" << constants_.size() << " = wrapped number " << Describe(t.get()) << " = "
             << x << "\n";
        constants_.push_back(std::move(t));
        return constants_.size() - 1;
    }

    // A random tensor whose sizes broadcast against `like`'s.
    size_t BroadcastParam(const pith_tensor *like)
    {
        std::vector<int64_t> sizes = SizesOf(like);
        sizes.erase(sizes.begin(), sizes.begin() + rng_.Range(0, (int64_t)sizes.size()));
        for (int64_t &s : sizes)
            if (rng_.Chance(0.3))
                s = 1;
        Tensor t(pith_empty((int)sizes.size(), sizes.data(), RandomDtype()));
        eager_oracle::FillRandom(t.get(), rng_);
        return AddParam(std::move(t));
    }

    // ---- choosing arguments ------------------------------------------------------------

    // A value, recent ones more often.
    size_t PickValue()
    {
        size_t n = values_.size();
        if (n > 4 && rng_.Chance(0.5))
            return n - 1 - (size_t)rng_.Range(0, 3);
        return (size_t)rng_.Range(0, (int64_t)n - 1);
    }

    const pith_tensor *Real(size_t v) const { return values_[v].real.get(); }

    // The second operand of a binary op: another value, a number as a 0-dim tensor, or a
    // tensor that broadcasts against the first.
    Arg Operand(size_t first)
    {
        double r = rng_.Uniform();
        if (r < 0.6)
            return ValueArg(PickValue());
        if (r < 0.75)
            return ParamArg(ScalarParam());
        if (r < 0.85)
            return ConstantArg(Constant());
        return ParamArg(BroadcastParam(Real(first)));
    }

    Arg Alpha()
    {
        switch (rng_.Range(0, 5)) {
        case 0: return IntArg(2);
        case 1: return IntArg(-1);
        case 2: return DoubleArg(0.5);
        case 3: return DoubleArg(-1.5);
        case 4: return BoolArg(true);  // an error unless the result is bool
        default: return IntArg(1);
        }
    }

    int64_t Dim(int ndim, bool allow_new = false)
    {
        int hi = ndim + (allow_new ? 1 : 0);
        if (hi == 0)
            return rng_.Chance(0.8) ? rng_.Range(-1, 0) : 1;  // 0-dim: 0 and -1 are valid
        int64_t d = rng_.Range(0, hi - 1);
        if (rng_.Chance(0.3))
            d -= hi;
        if (rng_.Chance(0.03))
            d = hi;  // out of range
        return d;
    }

    // Distinct dims, some negative.
    std::vector<int64_t> Dims(int ndim)
    {
        std::vector<int64_t> all((size_t)ndim);
        std::iota(all.begin(), all.end(), 0);
        for (int i = ndim - 1; i > 0; i--)
            std::swap(all[(size_t)i], all[(size_t)rng_.Range(0, i)]);
        all.resize((size_t)rng_.Range(ndim ? 1 : 0, ndim));
        for (int64_t &d : all)
            if (rng_.Chance(0.3))
                d -= ndim;
        return all;
    }

    // Sizes with the same number of elements for view and reshape (sometimes not).
    std::vector<int64_t> ViewSizes(const pith_tensor *x)
    {
        std::vector<int64_t> sizes = SizesOf(x);
        int64_t numel = pith_numel(x);
        switch (rng_.Range(0, 6)) {
        case 0: return {-1};
        case 1: return {numel};
        case 2:  // merge two adjacent dims
            if (sizes.size() >= 2) {
                size_t k = (size_t)rng_.Range(0, (int64_t)sizes.size() - 2);
                sizes[k] *= sizes[k + 1];
                sizes.erase(sizes.begin() + (long)k + 1);
            }
            return sizes;
        case 3:  // split a dim
            for (size_t k = 0; k < sizes.size(); k++)
                if (sizes[k] >= 2 && sizes[k] % 2 == 0) {
                    sizes[k] /= 2;
                    sizes.insert(sizes.begin() + (long)k, 2);
                    return sizes;
                }
            return sizes;
        case 4:  // a new dim of 1, somewhere
            sizes.insert(sizes.begin() + rng_.Range(0, (int64_t)sizes.size()), 1);
            return sizes;
        case 5:
            if (numel == 1)
                return {};
            if (!sizes.empty())
                sizes[0] = -1;
            return sizes;
        default: return {numel + 1};  // an error
        }
    }

    std::vector<int64_t> ExpandSizes(const pith_tensor *x)
    {
        std::vector<int64_t> sizes = SizesOf(x);
        for (int64_t &s : sizes) {
            if (s == 1 && rng_.Chance(0.6))
                s = rng_.Range(1, 3);
            else if (rng_.Chance(0.3))
                s = -1;
        }
        if (rng_.Chance(0.4))
            sizes.insert(sizes.begin(), rng_.Range(1, 3));
        if (rng_.Chance(0.03) && !sizes.empty())
            sizes.back() = 7;  // an error unless that dim is 1 or 7
        return sizes;
    }

    // ---- steps -------------------------------------------------------------------------

    void RandomStep()
    {
        size_t x = PickValue();
        const pith_tensor *xr = Real(x);
        int ndim = pith_ndim(xr);
        Step s;
        double r = rng_.Uniform() * 100.0;
        if (r < 12) {
            static const std::vector<const char *> unary = {"neg", "exp", "tanh",
                                                            "relu", "sigmoid", "abs"};
            s.op = rng_.Pick(unary);
            s.args = {ValueArg(x)};
        } else if (r < 32) {
            static const std::vector<const char *> binary = {
                "add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "maximum", "eq.Tensor",
                "lt.Tensor"};
            s.op = rng_.Pick(binary);
            Arg other = Operand(x);
            if (other.kind != Arg::VALUE && rng_.Chance(0.2))
                s.args = {other, ValueArg(x)};  // the number first
            else
                s.args = {ValueArg(x), other};
            if ((s.op == "add.Tensor" || s.op == "sub.Tensor") && rng_.Chance(0.4))
                s.args.push_back(Alpha());
        } else if (r < 36) {
            s.op = "where.self";
            size_t cond = x;
            for (int tries = 0; tries < 8 && pith_tensor_dtype(Real(cond)) != PITH_BOOL; tries++)
                cond = PickValue();
            s.args = {ValueArg(cond), Operand(cond), Operand(cond)};
        } else if (r < 40) {
            s.op = "clamp";
            s.args = {ValueArg(x)};
            for (int k = 0; k < 2; k++) {
                double c = rng_.Uniform();
                if (c < 0.3)
                    s.args.push_back(NoneArg());
                else if (c < 0.6)
                    s.args.push_back(IntArg(rng_.Range(-2, 2)));
                else
                    s.args.push_back(DoubleArg((double)rng_.Range(-6, 6) / 4.0));
            }
            if (rng_.Chance(0.3))
                s.args.pop_back();  // max left to its default
        } else if (r < 50) {
            static const std::vector<const char *> reductions = {"sum.dim_IntList", "mean.dim",
                                                                 "amax"};
            s.op = rng_.Pick(reductions);
            s.args = {ValueArg(x)};
            if (s.op != "amax" && rng_.Chance(0.2))
                s.args.push_back(NoneArg());
            else if (rng_.Chance(0.9))
                s.args.push_back(ListArg(Dims(ndim)));
            if (s.args.size() == 2 && rng_.Chance(0.7))
                s.args.push_back(BoolArg(rng_.Chance(0.5)));
        } else if (r < 74) {
            ViewStep(x, ndim, s);
        } else if (r < 76) {
            // a cast: fused as a member, or (to its own dtype) `self` itself
            static const std::vector<pith_dtype> to = {PITH_FLOAT32, PITH_FLOAT64,
                                                       PITH_FLOAT16, PITH_INT32};
            s.op = "to.dtype";
            s.args = {ValueArg(x), DtypeArg(rng_.Pick(to)), BoolArg(false),
                      BoolArg(rng_.Chance(0.3))};
        } else if (r < 78 && ndim >= 1) {
            // a linear: a GEMM head when its columns are many (Note [GEMM epilogues])
            int64_t k = SizesOf(xr).back(), m = rng_.Chance(0.5) ? 300 : rng_.Range(1, 4);
            pith_dtype dt = pith_tensor_dtype(xr);
            if (!pith_dtype_is_floating(dt) || rng_.Chance(0.1))
                dt = rng_.Chance(0.5) ? PITH_FLOAT32 : PITH_FLOAT64;
            std::vector<int64_t> ws = {m, k}, bs = {m};
            Tensor w(pith_empty(2, ws.data(), dt)), b(pith_empty(1, bs.data(), dt));
            eager_oracle::FillRandom(w.get(), rng_);
            eager_oracle::FillRandom(b.get(), rng_);
            s.op = "linear";
            s.args = {ValueArg(x), ParamArg(AddParam(std::move(w))),
                      rng_.Chance(0.7) ? ParamArg(AddParam(std::move(b))) : NoneArg()};
        } else if (r < 80) {
            s.op = "matmul";
            if (rng_.Chance(0.6) && ndim >= 1) {
                int64_t n = SizesOf(xr).back();
                std::vector<int64_t> w = {n};
                if (rng_.Chance(0.7))
                    w.push_back(rng_.Range(1, 4));
                pith_dtype dt = pith_tensor_dtype(xr);
                if (rng_.Chance(0.1) || !pith_dtype_is_floating(dt))
                    dt = rng_.Chance(0.5) ? PITH_FLOAT32 : PITH_FLOAT64;
                Tensor t(pith_empty((int)w.size(), w.data(), dt));
                eager_oracle::FillRandom(t.get(), rng_);
                s.args = {ValueArg(x), ParamArg(AddParam(std::move(t)))};
            } else {
                s.args = {ValueArg(x), ValueArg(PickValue())};
            }
        } else if (r < 95) {
            InplaceStep(s);
            if (s.op.empty())
                return;
        } else {
            if (history_.empty())
                return;
            s = rng_.Pick(history_);  // the same call again: CSE may not merge a mutation
        }
        Apply(s);
    }

    void ViewStep(size_t x, int ndim, Step &s)
    {
        const pith_tensor *xr = Real(x);
        s.makes_view = true;
        s.args = {ValueArg(x)};
        switch (rng_.Range(0, 8)) {
        case 0:
            s.op = "view";
            s.args.push_back(ListArg(ViewSizes(xr)));
            break;
        case 1:
            s.op = "reshape";
            s.args.push_back(ListArg(ViewSizes(xr)));
            break;
        case 2: {
            s.op = "permute";
            std::vector<int64_t> perm = Dims(ndim);
            if ((int)perm.size() < ndim || rng_.Chance(0.05))
                perm = Dims(ndim);  // often not a permutation: an error
            std::vector<int64_t> full((size_t)ndim);
            std::iota(full.begin(), full.end(), 0);
            for (int i = ndim - 1; i > 0; i--)
                std::swap(full[(size_t)i], full[(size_t)rng_.Range(0, i)]);
            s.args.push_back(ListArg(rng_.Chance(0.9) ? full : perm));
            break;
        }
        case 3:
            s.op = "transpose.int";
            s.args.push_back(IntArg(Dim(ndim)));
            s.args.push_back(IntArg(Dim(ndim)));
            break;
        case 4:
            s.op = "expand";
            s.args.push_back(ListArg(ExpandSizes(xr)));
            break;
        case 5: {
            s.op = "slice.Tensor";
            int64_t dim = Dim(ndim);
            int64_t size = ndim ? SizesOf(xr)[(size_t)((dim % ndim + ndim) % ndim)] : 1;
            s.args.push_back(IntArg(dim));
            s.args.push_back(rng_.Chance(0.2) ? NoneArg() : IntArg(rng_.Range(-size - 1, size + 1)));
            s.args.push_back(rng_.Chance(0.2) ? NoneArg() : IntArg(rng_.Range(-size - 1, size + 1)));
            s.args.push_back(IntArg(rng_.Range(1, 3)));
            break;
        }
        case 6:
            s.op = "unsqueeze";
            s.args.push_back(IntArg(Dim(ndim, true)));
            break;
        case 7: {
            s.op = "select.int";
            int64_t dim = Dim(ndim);
            int64_t size = ndim ? SizesOf(xr)[(size_t)((dim % ndim + ndim) % ndim)] : 1;
            s.args.push_back(IntArg(dim));
            s.args.push_back(IntArg(rng_.Chance(0.1) ? size : rng_.Range(-size, size - 1)));
            break;
        }
        default:
            s.op = "contiguous";
            break;
        }
    }

    // add_, mul_ or relu_ on an intermediate, a view of one, or an input.
    void InplaceStep(Step &s)
    {
        std::vector<size_t> views, inputs, others;
        for (size_t v = 0; v < values_.size(); v++)
            (values_[v].from_view ? views : values_[v].is_input ? inputs : others).push_back(v);
        double r = rng_.Uniform();
        size_t self = r < 0.4 && !views.empty()    ? rng_.Pick(views)
                      : r < 0.6 && !inputs.empty() ? rng_.Pick(inputs)
                                                   : PickValue();
        static const std::vector<const char *> ops = {"add_.Tensor", "mul_.Tensor", "relu_"};
        s.op = rng_.Pick(ops);
        s.args = {ValueArg(self)};
        if (s.op != "relu_") {
            Arg other = Operand(self);
            // Partly overlapping operands have no one eager answer (the order in which the
            // elements are written decides it): such steps are not made.
            if (other.kind == Arg::VALUE && PartlyOverlaps(Real(self), Real(other.index))) {
                s.op.clear();
                return;
            }
            s.args.push_back(other);
            if (s.op == "add_.Tensor" && rng_.Chance(0.3))
                s.args.push_back(Alpha());
        }
    }

    static bool PartlyOverlaps(const pith_tensor *a, const pith_tensor *b)
    {
        if (!pith_shares_storage(a, b))
            return false;
        return !(pith_data_ptr(a) == pith_data_ptr(b) && SizesOf(a) == SizesOf(b) &&
                 StridesOf(a) == StridesOf(b));
    }

    void Push(pith_stack *s, const Arg &a, bool graph)
    {
        switch (a.kind) {
        case Arg::VALUE:
            pith_stack_push_tensor(s, graph ? values_[a.index].standin.get()
                                            : values_[a.index].real.get());
            break;
        case Arg::PARAM:
            pith_stack_push_tensor(s, graph ? params_[a.index].standin.get()
                                            : params_[a.index].real.get());
            break;
        case Arg::CONSTANT: pith_stack_push_tensor(s, constants_[a.index].get()); break;
        case Arg::INT: pith_stack_push_int(s, a.i); break;
        case Arg::DOUBLE: pith_stack_push_double(s, a.d); break;
        case Arg::BOOL: pith_stack_push_bool(s, a.b); break;
        case Arg::NONE: pith_stack_push_none(s); break;
        case Arg::INT_LIST: pith_stack_push_int_list(s, a.list.data(), a.list.size()); break;
        case Arg::DTYPE: pith_stack_push_dtype(s, (pith_dtype)a.i); break;
        }
    }

    std::string ArgText(const Arg &a) const
    {
        std::ostringstream out;
        switch (a.kind) {
        case Arg::VALUE: out << "v" << a.index; break;
        case Arg::PARAM: out << "p" << a.index; break;
        case Arg::CONSTANT: out << "c" << a.index; break;
        case Arg::INT: out << a.i; break;
        case Arg::DOUBLE: out << a.d << "(double)"; break;
        case Arg::BOOL: out << (a.b ? "True" : "False"); break;
        case Arg::NONE: out << "None"; break;
        case Arg::DTYPE: out << pith_dtype_name((pith_dtype)a.i); break;
        case Arg::INT_LIST: {
            out << "[";
            for (size_t k = 0; k < a.list.size(); k++)
                out << (k ? ", " : "") << a.list[k];
            out << "]";
            break;
        }
        }
        return out.str();
    }

    // Runs the call eagerly and records it in the graph; both succeed or both fail.
    void Apply(const Step &s)
    {
        const pith_op *op = pith_op_find(s.op.c_str());
        if (!op)
            return;  // not in this build: the step is left out
        std::ostringstream text;
        text << s.op << "(";
        for (size_t k = 0; k < s.args.size(); k++)
            text << (k ? ", " : "") << ArgText(s.args[k]);
        text << ")";
        Stack eager(pith_stack_new()), graph(pith_stack_new());
        for (const Arg &a : s.args) {
            Push(eager.get(), a, false);
            Push(graph.get(), a, true);
        }
        pith_clear_error();
        pith_status eager_status = pith_call_boxed(op, eager.get());
        std::string eager_error = eager_status ? pith_last_error() : "";
        pith_clear_error();
        pith_status graph_status = pith_graph_call(graph_.get(), op, graph.get());
        std::string graph_error = graph_status ? pith_last_error() : "";
        pith_clear_error();
        if (eager_status != PITH_OK) {
            failed_steps_++;
            log_ << "  (fails: " << text.str() << ": " << pith_status_name(eager_status) << " "
                 << eager_error << ")\n";
            if (graph_status != eager_status)
                Fail(text.str() + ": eager fails with " + pith_status_name(eager_status) +
                     " (" + eager_error + ") but pith_graph_call gives " +
                     pith_status_name(graph_status) + " (" + graph_error + ")");
            return;
        }
        if (graph_status != PITH_OK) {
            Fail(text.str() + ": eager succeeds but pith_graph_call fails with " +
                 pith_status_name(graph_status) + " (" + graph_error + ")");
            return;
        }
        if (pith_stack_size(eager.get()) != 1 || pith_stack_size(graph.get()) != 1) {
            Fail(text.str() + ": " + std::to_string(pith_stack_size(eager.get())) +
                 " eager results, " + std::to_string(pith_stack_size(graph.get())) +
                 " in the graph");
            return;
        }
        Value v;
        v.real.reset(pith_stack_get_tensor(eager.get(), 0));
        v.standin.reset(pith_stack_get_tensor(graph.get(), 0));
        v.from_view = s.makes_view;
        if (!v.real || !v.standin) {
            Fail(text.str() + ": a result is not a tensor");
            return;
        }
        std::string meta = StandinMismatch(v.real.get(), v.standin.get());
        if (!meta.empty()) {
            Fail(text.str() + ": the stand-in differs from eager's result: " + meta);
            return;
        }
        log_ << "  v" << values_.size() << " = " << text.str() << " -> "
             << Describe(v.real.get()) << "\n";
        values_.push_back(std::move(v));
        ok_steps_++;
        if (s.op.back() == '_' || s.op.find("_.") != std::string::npos)
            inplace_steps_++;
        history_.push_back(s);
    }

    // The stand-in's dtype and sizes are the eager result's, and so are its strides along
    // every dim of more than one element (as a Meta kernel and the real kernel agree).
    static std::string StandinMismatch(const pith_tensor *real, const pith_tensor *standin)
    {
        if (pith_tensor_device(standin) != PITH_META)
            return "the stand-in is not a Meta tensor";
        if (pith_tensor_dtype(real) != pith_tensor_dtype(standin) ||
            SizesOf(real) != SizesOf(standin))
            return "eager " + Describe(real) + ", stand-in " + Describe(standin);
        if (pith_numel(real) > 1) {
            std::vector<int64_t> sizes = SizesOf(real), a = StridesOf(real), b = StridesOf(standin);
            for (size_t k = 0; k < sizes.size(); k++)
                if (sizes[k] > 1 && a[k] != b[k])
                    return "eager " + Describe(real) + ", stand-in " + Describe(standin);
        }
        return "";
    }

    void MarkOutputs()
    {
        int n = (int)rng_.Range(1, 3);
        for (int k = 0; k < n; k++) {
            size_t v = values_.size() > 1 && rng_.Chance(0.6)
                           ? values_.size() / 2 + (size_t)rng_.Range(0, (int64_t)(values_.size() - 1) / 2)
                           : (size_t)rng_.Range(0, (int64_t)values_.size() - 1);
            if (pith_graph_output(graph_.get(), values_[v].standin.get()) != PITH_OK) {
                Fail("pith_graph_output(v" + std::to_string(v) + ") failed: " + pith_last_error());
                return;
            }
            log_ << "  output " << outputs_.size() << " = v" << v << ": "
                 << Describe(values_[v].real.get()) << "\n";
            outputs_.push_back(v);
        }
    }

    void CompareOutputs(const std::string &where, const std::vector<Tensor> &got)
    {
        for (size_t k = 0; k < outputs_.size(); k++) {
            std::string m = BitwiseMismatch(values_[outputs_[k]].real.get(), got[k].get());
            if (!m.empty())
                Fail(where + ": output " + std::to_string(k) + " (v" +
                     std::to_string(outputs_[k]) + "): " + m);
        }
    }

    void CompareInputs(const std::string &where, const std::vector<Tensor> &got)
    {
        for (size_t k = 0; k < inputs_.size(); k++) {
            std::string m = BitwiseMismatch(values_[inputs_[k]].real.get(), got[k].get());
            if (!m.empty())
                Fail(where + ": input " + std::to_string(k) + " after the run: " + m);
        }
    }

    uint64_t seed_;
    Rng rng_;
    Graph graph_;
    std::vector<Tensor> originals_;  // the inputs as they were before any step
    std::vector<Value> values_;
    std::vector<Param> params_;
    std::vector<Tensor> constants_;  // wrapped numbers, the same tensor on both stacks
    std::vector<size_t> inputs_, outputs_;  // indices into values_
    std::vector<Step> history_;             // the steps that succeeded
    std::vector<std::string> failures_;
    std::ostringstream log_;
    std::string compiled_dump_;
    int ok_steps_ = 0, failed_steps_ = 0, inplace_steps_ = 0;
};

// The seeds to run: PITH_PROPERTY_SEED alone, or 1..PITH_PROPERTY_SEEDS (default 500).
std::vector<uint64_t> Seeds()
{
    if (const char *one = std::getenv("PITH_PROPERTY_SEED"))
        return {std::strtoull(one, nullptr, 10)};
    int n = kDefaultSeeds;
    if (const char *count = std::getenv("PITH_PROPERTY_SEEDS"))
        n = std::max(1, std::atoi(count));
    std::vector<uint64_t> seeds;
    for (int k = 1; k <= n; k++)
        seeds.push_back((uint64_t)k);
    return seeds;
}

// Runs `check` on the program of every seed; reports the first few failing seeds in full.
void ForEachSeed(const std::function<bool(Program &)> &check, int *ok_steps = nullptr,
                 int *failed_steps = nullptr, int *inplace_steps = nullptr)
{
    int failing = 0;
    for (uint64_t seed : Seeds()) {
        Program p(seed);
        bool ok = p.Build() && check(p);
        if (ok_steps)
            *ok_steps += p.ok_steps();
        if (failed_steps)
            *failed_steps += p.failed_steps();
        if (inplace_steps)
            *inplace_steps += p.inplace_steps();
        if (!ok && ++failing <= 3)
            ADD_FAILURE() << p.Report();
        else if (std::getenv("PITH_PROPERTY_VERBOSE"))
            std::printf("%s", p.Report().c_str());
    }
    EXPECT_EQ(failing, 0) << "programs that disagree with eager (the first 3 are printed)";
}

const CompileCase kDefaults = {"default options", true, true, true, true, 4};
const CompileCase kPassesOff = {"dce, cse, plan_memory and fuse off", false, false, false,
                                 false, 4, false};

class CompiledGraphProperty : public eager_oracle::LiveTensorTest {};

TEST_F(CompiledGraphProperty, TheOpsOfTheProgramsExist)
{
    for (const char *name :
         {"neg", "exp", "tanh", "relu", "sigmoid", "abs", "add.Tensor", "sub.Tensor",
          "mul.Tensor", "div.Tensor", "maximum", "eq.Tensor", "lt.Tensor", "where.self", "clamp",
          "sum.dim_IntList", "mean.dim", "amax", "view", "reshape", "permute", "transpose.int",
          "expand", "slice.Tensor", "unsqueeze", "select.int", "contiguous", "matmul",
          "add_.Tensor", "mul_.Tensor", "relu_"})
        EXPECT_NE(pith_op_find(name), nullptr) << name;
}

TEST_F(CompiledGraphProperty, FailingCallsFailInTheGraphWithTheSameStatus)
{
    int ok = 0, failed = 0, inplace = 0;
    ForEachSeed([](Program &) { return true; }, &ok, &failed, &inplace);
    // The programs are worth running: most calls succeed, and some fail or write in place.
    std::printf("[ stats    ] %d calls succeeded (%d in place), %d failed eagerly\n", ok,
                inplace, failed);
    if (Seeds().size() > 1) {
        EXPECT_GT(ok, 8 * (int)Seeds().size());
        EXPECT_GT(failed, 0);
        EXPECT_GT(inplace, (int)Seeds().size());
    }
}

TEST_F(CompiledGraphProperty, RunsMatchEagerBitwise)
{
    // With the defaults, fusion on: the programs must give it groups to form, and some of
    // them must end in a reduction or run a row op (See Note [Fusion legality]).
    // And some must start with a GEMM head or fuse a cast.
    int fused = 0, rows = 0, heads = 0, casts = 0;
    ForEachSeed([&](Program &p) {
        bool ok = p.CheckCompiled(kDefaults);
        const std::string &dump = p.compiled_dump();
        fused += dump.find(": group of ") != std::string::npos;
        rows += dump.find(", the last ") != std::string::npos;
        heads += dump.find("(a GEMM and its epilogue)") != std::string::npos;
        casts += dump.find("= to.dtype(") != std::string::npos ||
                 dump.find(" (as ") != std::string::npos;
        return ok;
    });
    std::printf("[ stats    ] %d of %zu programs have a fused group, %d a row member or root, "
                "%d a GEMM head, %d a fused cast\n",
                fused, Seeds().size(), rows, heads, casts);
    if (Seeds().size() >= 200) { // about 12% and 0.6% of the default 500
        EXPECT_GT(fused, (int)Seeds().size() / 20);
        EXPECT_GT(rows, 0);
        EXPECT_GT(heads, 0);
        EXPECT_GT(casts, 0);
    }
}

TEST_F(CompiledGraphProperty, RunsMatchEagerBitwiseWithFusionAloneOff)
{
    const CompileCase unfused = {"fuse off", false, true, true, true, 4, false};
    ForEachSeed([&](Program &p) { return p.CheckCompiled(unfused); });
}

TEST_F(CompiledGraphProperty, RunsMatchEagerBitwiseWithThePassesOff)
{
    ForEachSeed([](Program &p) { return p.CheckCompiled(kPassesOff); });
}

TEST_F(CompiledGraphProperty, RunsMatchEagerBitwiseWithEachPassAloneAndOneArena)
{
    ForEachSeed([](Program &p) {
        const CompileCase cases[] = {
            {"dce only", false, true, false, false, 1, false},
            {"cse only", false, false, true, false, 1, false},
            {"plan_memory only", false, false, false, true, 1, false},
            {"fuse only", false, false, false, false, 1, true},
        };
        bool ok = true;
        for (const CompileCase &cc : cases)
            ok = p.CheckCompiled(cc) && ok;
        return ok;
    });
}

}  // namespace
