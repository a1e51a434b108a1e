// meta_parity_cases.cc — the sample invocations of every built-in op for the meta parity
// suite: generated rows for the unary and binary elementwise ops (from the op lists), and a
// hand-written table for the rest. See meta_parity_test.cc.
#include "meta_parity.h"

// After pith.h: macros only, the unary/binary op lists and their schema names.

namespace meta_parity {

namespace {

constexpr pith_dtype b8 = PITH_BOOL, u8 = PITH_UINT8, i32 = PITH_INT32, i64 = PITH_INT64,
                     f16 = PITH_FLOAT16, bf16 = PITH_BFLOAT16, f32 = PITH_FLOAT32,
                     f64 = PITH_FLOAT64;

// ---- the argument DSL ----

Arg T(pith_dtype dtype, Shape sizes, Shape strides = {})
{
    Arg a;
    a.kind = Arg::TENSOR;
    a.dtype = dtype;
    a.sizes = std::move(sizes);
    a.strides = std::move(strides);
    return a;
}
Arg F(Shape sizes, Shape strides = {}) { return T(f32, std::move(sizes), std::move(strides)); }
// An int64 index tensor holding i % mod, so every index is in range for a dim of size mod.
Arg Idx(Shape sizes, int64_t mod)
{
    Arg a = T(i64, std::move(sizes));
    a.base = 0;
    a.mod = mod;
    return a;
}
// An index tensor of `dtype` (int32 or int64) holding i % mod.
Arg IdxT(pith_dtype dtype, Shape sizes, int64_t mod)
{
    Arg a = Idx(std::move(sizes), mod);
    a.dtype = dtype;
    return a;
}
// A mask (bool, or `dtype`) whose element i is true unless i % mod == 0.
Arg Mask(Shape sizes, int64_t mod, pith_dtype dtype = PITH_BOOL)
{
    Arg a = T(dtype, std::move(sizes));
    a.base = 0;
    a.mod = mod;
    return a;
}
Arg TL(std::vector<Arg> tensors)
{
    Arg a;
    a.kind = Arg::TLIST;
    a.list = std::move(tensors);
    return a;
}
Arg I(int64_t v)
{
    Arg a;
    a.kind = Arg::INT;
    a.i = v;
    return a;
}
Arg D(double v)
{
    Arg a;
    a.kind = Arg::DOUBLE;
    a.d = v;
    return a;
}
Arg B(bool v)
{
    Arg a;
    a.kind = Arg::BOOL;
    a.b = v;
    return a;
}
Arg None() { return Arg(); }
Arg S(const char *v)
{
    Arg a;
    a.kind = Arg::STR;
    a.s = v;
    return a;
}
Arg L(Shape v)
{
    Arg a;
    a.kind = Arg::ILIST;
    a.sizes = std::move(v);
    return a;
}
Arg DT(pith_dtype v)
{
    Arg a;
    a.kind = Arg::DTYPE;
    a.dtype = v;
    return a;
}
// The factory device: CPU in the CPU run, Meta in the meta run.
Arg Dev()
{
    Arg a;
    a.kind = Arg::DEVICE;
    return a;
}

// ---- the sample invocations ----

struct BinaryInfo {
    const char *fn, *out, *inplace;
    bool alpha;
};

void add_unary_cases(std::vector<Case> &v)
{
    static const char *const names[] = {
#define PITH_TEST_UNARY_NAMES
#include "tests/kernels/generated/elementwise_cases.inc"
#undef PITH_TEST_UNARY_NAMES
    };
    for (const char *n : names) {
        std::string fn = n, out = fn + ".out", inplace = fn + "_";
        // Functional: a dtype sweep; non-contiguous, 0-dim and empty inputs.
        for (const Arg &x : {F({2, 3}, {1, 2}), T(i64, {}), T(b8, {0, 3}), T(f16, {3}),
                             T(f64, {4, 1}), T(bf16, {2})})
            v.push_back({fn, ANY, {x}});
        v.push_back({out, ANY, {F({2, 3}), F({2, 3})}});
        v.push_back({out, ANY, {F({2, 3}, {1, 2}), F({0})}});  // out is resized
        v.push_back({out, ANY, {T(i64, {3}), T(i64, {3})}});
        v.push_back({out, ANY, {F({3}), T(b8, {3})}});
        v.push_back({out, ANY, {T(b8, {2}), T(i32, {5})}});
        v.push_back({out, ERR, {F({3}), F({3}, {0})}});  // out overlaps itself
        v.push_back({inplace, ANY, {F({2, 3}, {1, 2})}});
        v.push_back({inplace, ANY, {T(i32, {2, 3}, {1, 2})}});
        v.push_back({inplace, ANY, {T(i64, {3})}});
        v.push_back({inplace, ANY, {T(b8, {})}});
        v.push_back({inplace, ERR, {F({3}, {0})}});  // self overlaps itself
    }
}

void add_binary_cases(std::vector<Case> &v)
{
    static const BinaryInfo infos[] = {
#define PITH_TEST_BINARY_OVERLOADS
#include "tests/kernels/generated/elementwise_cases.inc"
#undef PITH_TEST_BINARY_OVERLOADS
    };
    for (const BinaryInfo &b : infos) {
        // The alpha argument comes before `out` on the stack.
        auto args = [&](std::vector<Arg> a, std::vector<Arg> tail = {}) {
            if (b.alpha)
                a.push_back(I(1));
            a.insert(a.end(), tail.begin(), tail.end());
            return a;
        };
        const std::vector<std::pair<Arg, Arg>> sweep = {
            {F({2, 3}), F({3})},                 // broadcast one side
            {T(i64, {4, 1}), F({1, 5})},         // broadcast both sides, promote
            {F({}), T(i64, {2})},                // 0-dim
            {T(b8, {0, 3}), T(b8, {3})},         // empty
            {T(i32, {2, 3}, {1, 2}), T(i64, {2, 3})},  // non-contiguous
            {T(f16, {3}), F({})},                // 0-dim does not promote the category
            {T(u8, {2}), T(i32, {2})},
        };
        for (const auto &p : sweep)
            v.push_back({b.fn, ANY, args({p.first, p.second})});
        v.push_back({b.fn, ERR, args({F({2, 3}), F({4})})});  // broadcast mismatch
        v.push_back({b.out, ANY, args({F({2, 3}), F({3})}, {F({2, 3})})});
        v.push_back({b.out, ANY, args({T(i64, {2}), T(i64, {2})}, {F({0})})});
        v.push_back({b.out, ANY, args({T(i64, {2, 1}), T(i64, {2})}, {T(i64, {2, 2}, {1, 2})})});
        v.push_back({b.out, ERR, args({F({2, 3}), F({4})}, {F({2, 3})})});
        v.push_back({b.out, ERR, args({F({3}), F({3})}, {F({3}, {0})})});
        v.push_back({b.inplace, ANY, args({F({2, 3}), F({3})})});
        v.push_back({b.inplace, ANY, args({T(i64, {2, 3}), F({2, 3})})});
        v.push_back({b.inplace, ANY, args({T(i32, {2}, {2}), T(i64, {})})});
        v.push_back({b.inplace, ERR, args({F({3}), F({2, 3})})});  // self cannot broadcast
        v.push_back({b.inplace, ERR, args({F({3}, {0}), F({3})})});
    }
    // alpha: a float alpha for integer inputs and a bool alpha are errors.
    for (const char *fn : {"add.Tensor", "sub.Tensor"}) {
        v.push_back({fn, OK, {F({2}), F({2}), D(2.5)}});
        v.push_back({fn, ERR, {T(i64, {2}), T(i64, {2}), D(2.5)}});
        v.push_back({fn, ERR, {F({2}), F({2}), B(true)}});
    }
    v.push_back({"add.out", ERR, {T(i64, {2}), T(i64, {2}), D(0.5), T(i64, {2})}});
    v.push_back({"sub_.Tensor", ERR, {T(i64, {2}), T(i64, {2}), D(0.5)}});
}

// roll, flip, repeat, repeat_interleave, outer, ger, meshgrid, einsum (kernels/shape_ops.c,
// kernels/einsum.c).
void add_shape_cases(std::vector<Case> &v)
{
    const std::vector<Case> cases = {
        {"roll", OK, {F({2, 3}), L({1}), L({0})}},
        {"roll", OK, {F({2, 3}, {1, 2}), L({-7}), L({})}},  // flat, of a strided input
        {"roll", OK, {T(i64, {2, 3}), L({1, 2}), L({0, -1})}},
        {"roll", OK, {F({3, 0}, {1, 3}), L({1}), L({5})}},  // empty: layout kept, dims unchecked
        {"roll", OK, {T(b8, {}), L({1}), L({})}},
        {"roll", ERR, {F({2, 3}), L({}), L({})}},
        {"roll", ERR, {F({2, 3}), L({1, 2}), L({0})}},
        {"roll", ERR, {F({2, 3}), L({1}), L({2})}},
        {"roll", ERR, {F({}), L({1}), L({0})}},
        {"flip", OK, {F({2, 3}, {1, 2}), L({0})}},  // dense: strides kept
        {"flip", OK, {T(f16, {}), L({})}},
        {"flip", OK, {F({2, 3}, {0, 1}), L({1, 0})}},  // expanded: contiguous
        {"flip", OK, {T(i32, {0, 3}), L({-1})}},
        {"flip", ERR, {F({2, 3}), L({0, -2})}},
        {"flip", ERR, {F({2, 3}), L({2})}},
        {"repeat", OK, {F({2, 3}), L({2, 1, 2})}},
        {"repeat", OK, {T(bf16, {}), L({})}},
        {"repeat", OK, {F({2, 3}, {1, 2}), L({0, 2})}},
        {"repeat", ERR, {F({2, 3}), L({2})}},
        {"repeat", ERR, {F({2, 3}), L({-1, 1})}},
        {"repeat_interleave.Tensor", DATA, {Idx({3}, 3), None()}},
        {"repeat_interleave.Tensor", OK, {Idx({3}, 3), I(3)}},
        {"repeat_interleave.Tensor", OK, {IdxT(i32, {0}, 1), None()}},
        {"repeat_interleave.Tensor", ERR, {F({3}), None()}},
        {"repeat_interleave.Tensor", ERR, {Idx({2, 2}, 3), None()}},
        {"repeat_interleave.Tensor", ERR, {Idx({3}, 3), I(-1)}},
        {"repeat_interleave.self_Tensor", OK, {F({2, 3}), Idx({2}, 3), I(0), I(1)}},
        {"repeat_interleave.self_Tensor", OK, {T(i64, {2, 3}, {1, 2}), Idx({}, 3), I(1), I(0)}},
        {"repeat_interleave.self_Tensor", DATA, {F({2, 3}), Idx({2}, 3), I(0), None()}},
        {"repeat_interleave.self_Tensor", ERR, {F({2, 3}), Idx({3}, 3), I(0), None()}},
        {"repeat_interleave.self_Tensor", ERR, {F({2, 3}), Idx({2, 2}, 3), None(), None()}},
        {"repeat_interleave.self_Tensor", ERR, {F({}), Idx({1}, 3), I(0), I(1)}},
        {"repeat_interleave.self_int", OK, {F({2, 3}), I(2), None(), None()}},
        {"repeat_interleave.self_int", OK, {F({2, 3}, {1, 2}), I(3), I(1), I(9)}},
        {"repeat_interleave.self_int", OK, {T(b8, {}), I(2), None(), None()}},
        {"repeat_interleave.self_int", ERR, {F({2, 3}), I(-1), None(), None()}},
        {"repeat_interleave.self_int", ERR, {F({2, 3}), I(2), I(2), None()}},
        {"repeat_interleave.self_int", ERR, {F({2, 3}), I(2), None(), I(5)}},
        {"outer", OK, {F({2}), T(i64, {3})}},
        {"outer", OK, {T(b8, {0}), T(b8, {2})}},
        {"outer", OK, {F({3}, {2}), F({2})}},
        {"outer", ERR, {F({2, 2}), F({2})}},
        {"outer", ERR, {F({2}), F({})}},
        {"ger", OK, {T(i32, {2}), T(u8, {3})}},
        {"ger", ERR, {F({}), F({2})}},
        {"meshgrid", OK, {TL({F({2}), F({3})})}},
        {"meshgrid", OK, {TL({F({}), F({0}), F({4}, {2})})}},
        {"meshgrid", ERR, {TL({})}},
        {"meshgrid", ERR, {TL({F({2}), T(i64, {2})})}},
        {"meshgrid", ERR, {TL({F({2, 2})})}},
        {"meshgrid.indexing", OK, {TL({F({2}), F({3}), F({})}), S("xy")}},
        {"meshgrid.indexing", OK, {TL({T(i64, {3}, {2})}), S("ij")}},
        {"meshgrid.indexing", ERR, {TL({F({2})}), S("IJ")}},
        {"meshgrid.indexing", ERR, {TL({F({2}), F({2, 1})}), S("xy")}},
        {"einsum", OK, {S("ij,jk->ik"), TL({F({2, 3}), F({3, 4})}), None()}},
        {"einsum", OK, {S("ii"), TL({F({3, 3})}), None()}},
        {"einsum", OK, {S("ij->ji"), TL({F({2, 3}, {1, 2})}), None()}},  // a view
        {"einsum", OK, {S("...ij,...jk"), TL({F({5, 1, 2, 3}), F({6, 3, 4})}), None()}},
        {"einsum", OK, {S("ij,jk,kl->il"), TL({F({2, 3}), F({3, 4}), F({4, 5})}), L({1, 2, 0, 1})}},
        {"einsum", OK, {S("ij,k->i"), TL({T(i32, {2, 3}), T(i32, {4})}), None()}},
        {"einsum", OK, {S("i,i->i"), TL({F({3}), T(f64, {1})}), None()}},
        {"einsum", ERR, {S("ij,jk->ik"), TL({F({2, 3})}), None()}},
        {"einsum", ERR, {S("ij,jk"), TL({F({2, 3}), F({2, 3})}), None()}},
        {"einsum", ERR, {S("i.j"), TL({F({2, 3})}), None()}},
        {"einsum", ERR, {S("ij,jk"), TL({F({2, 3}), T(f64, {3, 4})}), None()}},
        {"einsum", ERR, {S("ij,jk,kl"), TL({F({2, 3}), F({3, 4}), F({4, 5})}), L({0, 1})}},
        {"einsum", ERR, {S("ij"), TL({}), None()}},
    };
    v.insert(v.end(), cases.begin(), cases.end());
}

const std::vector<Case> &hand_written_cases()
{
    static const std::vector<Case> cases = {
        // ---- the other elementwise ops ----
        {"gelu", OK, {F({2, 3}), S("none")}},
        {"gelu", OK, {F({}), S("tanh")}},
        {"gelu", OK, {T(f64, {0, 2}), S("none")}},
        {"gelu", ERR, {F({2}), S("bogus")}},
        {"gelu", ANY, {T(i64, {3}), S("none")}},
        {"gelu.out", OK, {F({2, 3}), S("none"), F({2, 3})}},
        {"gelu.out", ERR, {F({2}), S("none"), T(i64, {2})}},
        {"gelu_", OK, {F({2, 3}, {1, 2}), S("tanh")}},
        {"gelu_", ERR, {F({3}, {0}), S("none")}},
        {"gelu_", ERR, {F({3}), S("bad")}},
        {"leaky_relu", OK, {F({2, 3}, {1, 2}), D(0.2)}},
        {"leaky_relu", OK, {T(f64, {0, 2}), D(0.01)}},
        {"leaky_relu", ERR, {T(i64, {3}), D(0.2)}},
        {"leaky_relu.out", OK, {F({2, 3}), D(0.2), F({2, 3})}},
        {"leaky_relu.out", ERR, {F({2}), D(0.2), T(i64, {2})}},
        {"leaky_relu_", OK, {T(bf16, {3}), D(0.2)}},
        {"leaky_relu_", ERR, {F({3}, {0}), D(0.2)}},
        {"elu", OK, {F({2, 3}), D(1), D(1), D(1)}},
        {"elu", OK, {T(f16, {}), D(0.5), D(2), D(1)}},
        {"elu", ERR, {T(b8, {3}), D(1), D(1), D(1)}},
        {"elu.out", OK, {F({2}), D(1), D(1), D(1), F({0})}},
        {"elu.out", ERR, {F({2}), D(1), D(1), D(1), T(b8, {2})}},
        {"elu_", OK, {F({2, 3}, {1, 2}), D(1), D(1), D(1)}},
        {"elu_", ERR, {T(i32, {2}), D(1), D(1), D(1)}},
        {"hardtanh", OK, {F({2, 3}, {1, 2}), D(-1), D(1)}},
        {"hardtanh", OK, {T(i64, {3}), D(-1.5), D(2.5)}},
        {"hardtanh", OK, {T(u8, {0}), I(0), I(2)}},
        {"hardtanh", ERR, {T(b8, {3}), I(0), I(1)}},
        {"hardtanh", ERR, {T(u8, {2}), I(-1), I(1)}},
        {"hardtanh", ERR, {T(i32, {2}), I(-3000000000), I(1)}},
        {"hardtanh.out", OK, {F({2}), D(0), D(1), F({2})}},
        {"hardtanh.out", ERR, {F({2}), D(0), D(1), T(i64, {2})}},
        {"hardtanh_", OK, {T(i32, {2, 3}, {1, 2}), I(0), I(6)}},
        {"hardtanh_", ERR, {F({3}, {0}), D(0), D(1)}},
        {"softplus", OK, {F({2, 3}), D(1), D(20)}},
        {"softplus", OK, {T(f64, {4, 1}), D(2), D(3)}},
        {"softplus", ERR, {T(i64, {3}), D(1), D(20)}},
        {"softplus.out", OK, {F({3}), D(1), D(20), F({3})}},
        {"softplus.out", ERR, {F({3}), D(1), D(20), F({4})}},
        {"gelu_backward", OK, {F({2, 3}), F({2, 3}), S("none")}},
        {"gelu_backward", OK, {F({3}), T(f64, {2, 3}), S("tanh")}},
        {"gelu_backward", OK, {T(bf16, {0, 2}), T(bf16, {0, 2}), S("none")}},
        {"gelu_backward", ERR, {F({2}), F({3}), S("none")}},
        {"gelu_backward", ERR, {F({2}), F({2}), S("bogus")}},
        {"gelu_backward", ERR, {T(i64, {3}), T(i64, {3}), S("none")}},
        {"log_sigmoid", OK, {F({2, 3}, {1, 2})}},
        {"log_sigmoid", OK, {T(bf16, {0})}},
        {"log_sigmoid", ERR, {T(i64, {3})}},
        {"log_sigmoid.out", OK, {F({2}), F({2})}},
        {"log_sigmoid.out", ERR, {F({2}), T(i64, {2})}},
        {"clamp", OK, {F({2, 3}), D(0.5), D(2)}},
        {"clamp", OK, {T(i64, {3}), I(1), None()}},
        {"clamp", OK, {T(i64, {}), D(1.5), None()}},
        {"clamp", OK, {T(b8, {0}), None(), I(1)}},
        {"clamp", ERR, {F({2}), None(), None()}},
        {"clamp_", OK, {F({2, 3}, {1, 2}), D(1), D(3)}},
        {"clamp_", ANY, {T(i64, {3}), D(1.5), None()}},
        {"clamp_", ERR, {F({2}), None(), None()}},
        {"where.self", OK, {T(b8, {2, 3}), F({3}), F({2, 1})}},
        {"where.self", OK, {T(b8, {}), T(i64, {2}), F({})}},
        {"where.self", OK, {T(b8, {0, 1}), T(i32, {2}), T(i32, {1})}},
        {"where.self", ERR, {F({3}), F({3}), F({3})}},
        {"where.self", ERR, {T(b8, {2}), F({3}), F({3})}},
        {"copy_", OK, {F({2, 3}), T(i64, {3}), B(false)}},
        {"copy_", OK, {F({2, 3}, {1, 2}), F({2, 3}), B(false)}},
        {"copy_", OK, {T(b8, {}), T(f64, {}), B(false)}},
        {"copy_", ERR, {F({2, 3}), F({4}), B(false)}},
        {"copy_", ERR, {F({3}, {0}), F({3}), B(false)}},
        {"to.dtype", OK, {F({2, 3}), DT(i64), B(false), B(false)}},
        {"to.dtype", OK, {T(f16, {}), DT(f64), B(false), B(true)}},
        {"to.dtype", OK, {F({2, 3}, {1, 2}), DT(f32), B(false), B(false)}},
        {"to.dtype", OK, {T(b8, {0, 2}), DT(bf16), B(false), B(true)}},
        {"clone", OK, {F({2, 3}, {1, 2})}},
        {"clone", OK, {T(b8, {0})}},
        {"clone", OK, {T(i64, {})}},
        {"contiguous", OK, {F({2, 3}, {1, 2})}},
        {"contiguous", OK, {T(i64, {})}},
        {"contiguous", OK, {F({2, 3})}},

        // ---- reductions ----
        {"sum", OK, {F({2, 3}), None()}},
        {"sum", OK, {T(i32, {2, 3}), None()}},
        {"sum", OK, {T(b8, {0, 3}), DT(f64)}},
        {"sum", OK, {F({}), None()}},
        {"mean", OK, {F({2, 3}, {1, 2}), None()}},
        {"mean", OK, {T(i64, {2, 3}), DT(f32)}},
        {"mean", ERR, {T(i64, {2, 3}), None()}},
        {"prod", OK, {F({2, 3}), None()}},
        {"prod", OK, {T(b8, {}), None()}},
        {"sum.out", OK, {F({2, 3}), None(), T(f64, {0})}},
        {"sum.out", ERR, {F({2, 3}), DT(f64), F({})}},
        {"mean.dtype_out", OK, {F({2, 3}), None(), F({})}},
        {"mean.dtype_out", ERR, {T(i64, {2, 3}), None(), T(i64, {})}},
        {"sum.dim_IntList", OK, {F({2, 3}), L({1}), B(false), None()}},
        {"sum.dim_IntList", OK, {T(i32, {2, 3}), None(), B(true), None()}},
        {"sum.dim_IntList", OK, {T(b8, {0, 3}), L({0}), B(false), DT(f64)}},
        {"sum.dim_IntList", OK, {F({}), None(), B(false), None()}},
        {"sum.dim_IntList", OK, {F({2, 3, 4}, {1, 2, 6}), L({0, -1}), B(true), None()}},
        {"sum.dim_IntList", ERR, {F({2, 3}), L({2}), B(false), None()}},
        {"sum.dim_IntList", ERR, {F({2, 3}), L({0, 0}), B(false), None()}},
        {"mean.dim", OK, {F({2, 3}), L({-1}), B(true), None()}},
        {"mean.dim", OK, {T(i64, {2, 3}), None(), B(false), DT(f32)}},
        {"mean.dim", OK, {T(f16, {0, 3}), L({1}), B(false), None()}},
        {"mean.dim", ERR, {T(i64, {2, 3}), None(), B(false), None()}},
        {"mean.dim", ERR, {F({2, 3}), L({3}), B(false), None()}},
        {"prod.dim_IntList", OK, {F({2, 3}), L({0}), B(false), None()}},
        {"prod.dim_IntList", OK, {T(i32, {2, 3}), None(), B(false), None()}},
        {"prod.dim_IntList", OK, {T(b8, {}), None(), B(true), None()}},
        {"prod.dim_IntList", ERR, {F({2, 3}), L({-3}), B(false), None()}},
        {"sum.IntList_out", OK, {F({2, 3}), L({1}), B(false), None(), T(f64, {0})}},
        {"sum.IntList_out", OK, {T(i32, {2, 3}), None(), B(true), None(), T(i64, {1, 1})}},
        {"sum.IntList_out", ERR, {F({2, 3}), L({1}), B(false), None(), F({3})}},
        {"sum.IntList_out", ERR, {F({2, 3}), L({1}), B(false), DT(f64), F({2})}},
        {"mean.out", OK, {F({2, 3}), L({-1}), B(true), None(), F({2, 1})}},
        {"mean.out", ERR, {T(i64, {2, 3}), None(), B(false), None(), T(i64, {})}},
        {"amax.out", OK, {F({2, 3}), L({1}), B(false), F({0})}},
        {"amax.out", ERR, {F({2, 3}), L({1}), B(false), T(f64, {2})}},
        {"amin.out", OK, {T(i64, {2, 3}), L({}), B(true), T(i64, {1, 1})}},
        {"amin.out", ERR, {F({0, 3}), L({0}), B(false), F({0})}},
        {"argmax.out", OK, {F({2, 3}), I(1), B(false), T(i64, {0})}},
        {"argmax.out", ERR, {F({2, 3}), I(1), B(false), F({2})}},
        {"argmin.out", OK, {F({2, 3}), None(), B(false), T(i64, {})}},
        {"argmin.out", ERR, {F({2, 3}), I(5), B(false), T(i64, {0})}},
        {"amax", OK, {F({2, 3}), L({1}), B(false)}},
        {"amax", OK, {T(i64, {2, 3}), L({}), B(true)}},
        {"amax", OK, {F({0, 3}), L({1}), B(false)}},
        {"amax", ERR, {F({0, 3}), L({0}), B(false)}},
        {"amax", ERR, {F({2, 3}), L({5}), B(false)}},
        {"amin", OK, {F({2, 3}, {1, 2}), L({0}), B(true)}},
        {"amin", OK, {T(f16, {}), L({}), B(false)}},
        {"amin", ERR, {F({0, 3}), L({0}), B(false)}},
        {"amin", ERR, {F({2, 3}), L({-3}), B(false)}},
        {"max", OK, {F({2, 3})}},
        {"max", OK, {T(i64, {})}},
        {"max", ERR, {F({0})}},
        {"min", OK, {F({2, 3}, {1, 2})}},
        {"min", OK, {T(b8, {3})}},
        {"min", ERR, {F({2, 0})}},
        {"max.other", OK, {F({2, 3}), F({3})}},
        {"max.other", OK, {T(i32, {2, 1}), T(i64, {3})}},
        {"max.other", ERR, {F({2, 3}), F({2})}},
        {"min.other", OK, {F({2, 3}, {1, 2}), F({})}},
        {"min.other", ERR, {F({4}), F({3})}},
        {"max.dim", OK, {F({2, 3}), I(1), B(false)}},
        {"max.dim", OK, {T(i32, {2, 3}), I(0), B(true)}},
        {"max.dim", OK, {F({}), I(0), B(false)}},
        {"max.dim", OK, {F({0, 3}), I(1), B(false)}},
        {"max.dim", ERR, {F({0, 3}), I(0), B(false)}},
        {"max.dim", ERR, {F({2, 3}), I(2), B(false)}},
        {"min.dim", OK, {F({2, 3}, {1, 2}), I(-1), B(false)}},
        {"min.dim", OK, {T(f64, {}), I(-1), B(true)}},
        {"min.dim", ERR, {F({0, 3}), I(0), B(true)}},
        {"min.dim", ERR, {F({2, 3}), I(-3), B(false)}},
        {"argmax", OK, {F({2, 3}), None(), B(false)}},
        {"argmax", OK, {F({2, 3}), I(1), B(true)}},
        {"argmax", OK, {T(i64, {}), None(), B(false)}},
        {"argmax", ERR, {F({0}), None(), B(false)}},
        {"argmax", ERR, {F({2}), I(1), B(false)}},
        {"argmin", OK, {F({2, 3}, {1, 2}), I(0), B(false)}},
        {"argmin", OK, {T(i32, {4}), None(), B(true)}},
        {"argmin", ERR, {F({3, 0}), I(1), B(false)}},
        {"argmin", ERR, {F({2}), I(-2), B(false)}},
        {"var", OK, {F({2, 3}), B(true)}},
        {"var", OK, {T(f64, {}), B(false)}},
        {"var", ERR, {T(i64, {2, 3}), B(true)}},
        {"var.dim", OK, {F({2, 3}), L({1}), B(false), B(true)}},
        {"var.dim", OK, {F({2, 3}), None(), B(true), B(false)}},
        {"var.dim", ERR, {F({2, 3}), L({2}), B(true), B(false)}},
        {"std", OK, {F({2, 3}, {1, 2}), B(false)}},
        {"std", ERR, {T(b8, {3}), B(true)}},
        {"std.dim", OK, {T(f16, {0, 3}), L({0}), B(true), B(true)}},
        {"std.dim", ERR, {T(i32, {2}), L({0}), B(true), B(false)}},
        {"var.correction", OK, {F({2, 3}), L({1}), B(false), None()}},
        {"var.correction", OK, {F({2, 3}), None(), B(true), I(0)}},
        {"var.correction", OK, {T(f64, {}), None(), B(false), None()}},
        {"var.correction", ERR, {T(i64, {2, 3}), None(), B(false), None()}},
        {"var.correction", ERR, {F({2, 3}), L({2}), B(false), None()}},
        {"std.correction", OK, {F({2, 3}, {1, 2}), L({0}), B(true), None()}},
        {"std.correction", OK, {T(f16, {0, 3}), L({0}), B(false), D(0.5)}},
        {"std.correction", ERR, {T(b8, {3}), None(), B(false), None()}},
        {"std.correction", ERR, {F({2, 3}), L({1, 1}), B(false), None()}},
        {"all.dims", OK, {T(b8, {2, 3}), L({1}), B(false)}},
        {"all.dims", OK, {F({2, 3}), None(), B(false)}},
        {"all.dims", OK, {T(u8, {2, 3}), None(), B(true)}},
        {"all.dims", OK, {F({}), None(), B(false)}},
        {"all.dims", ERR, {T(b8, {2, 3}), L({4}), B(false)}},
        {"any.dims", OK, {T(b8, {0, 3}), L({0}), B(false)}},
        {"any.dims", OK, {T(u8, {2}), None(), B(false)}},
        {"any.dims", OK, {T(i64, {2, 3}, {1, 2}), L({0, 1}), B(true)}},
        {"any.dims", ERR, {T(b8, {2, 3}), L({-3}), B(false)}},

        // ---- linear algebra ----
        {"matmul", OK, {F({2, 3}), F({3, 4})}},
        {"matmul", OK, {F({3}), F({3})}},
        {"matmul", OK, {F({3}), F({3, 2})}},
        {"matmul", OK, {F({2, 3}), F({3})}},
        {"matmul", OK, {F({2, 1, 2, 3}), F({4, 3, 5})}},
        {"matmul", ERR, {F({2, 1, 3}), F({4, 3, 5})}},  // batch dims 2 and 4
        {"matmul", OK, {F({2, 0}), F({0, 3})}},
        {"matmul", OK, {T(f64, {3, 2}, {1, 3}), T(f64, {2, 2})}},
        {"matmul", ERR, {F({2, 3}), F({4, 5})}},
        {"matmul", ERR, {F({}), F({3})}},
        {"matmul", ERR, {F({2, 3}), T(i64, {3, 4})}},
        {"mm", OK, {F({2, 3}), F({3, 4})}},
        {"mm", OK, {F({3, 2}, {1, 3}), F({2, 0})}},
        {"mm", OK, {T(i64, {2, 2}), T(i64, {2, 1})}},
        {"mm", ERR, {F({2, 3}), F({4, 2})}},
        {"mm", ERR, {F({3}), F({3, 2})}},
        {"mm", ERR, {F({2, 3}), T(f64, {3, 2})}},
        {"bmm", OK, {F({2, 2, 3}), F({2, 3, 4})}},
        {"bmm", OK, {F({0, 2, 3}), F({0, 3, 1})}},
        {"bmm", ERR, {F({2, 2, 3}), F({3, 3, 4})}},
        {"bmm", ERR, {F({2, 3}), F({3, 4})}},
        {"bmm", ERR, {F({2, 2, 3}), F({2, 4, 4})}},
        {"matmul.out", OK, {F({2, 3}), F({3, 4}), F({2, 4})}},
        {"matmul.out", OK, {F({3}), F({3}), F({0})}},  // out is resized to 0-dim
        {"matmul.out", OK, {F({2, 1, 2, 3}), F({4, 3, 5}), F({0, 2})}},
        {"matmul.out", OK, {T(f64, {3, 2}, {1, 3}), T(f64, {2}), T(f64, {3})}},
        {"matmul.out", OK, {F({2, 3}), F({3, 4}), F({2, 4}, {1, 2})}},  // strided out
        {"matmul.out", OK, {F({2, 0}), F({0, 3}), F({2, 3})}},
        {"matmul.out", ERR, {F({2, 3}), F({3, 4}), T(f64, {2, 4})}},
        {"matmul.out", ERR, {F({2, 3}), F({3, 4}), F({3, 3})}},
        {"matmul.out", ERR, {F({2, 3}), F({4, 5}), F({0})}},
        {"matmul.out", ERR, {F({2, 3}), F({3, 4}), F({2, 4}, {0, 1})}},  // expanded out
        {"mm.out", OK, {F({2, 3}), F({3, 4}), F({0})}},
        {"mm.out", OK, {F({3, 2}, {1, 3}), F({2, 0}), F({3, 0})}},
        {"mm.out", OK, {T(i64, {2, 2}), T(i64, {2, 1}), T(i64, {2, 1})}},
        {"mm.out", ERR, {T(i32, {2, 2}), T(i32, {2, 1}), T(i64, {0})}},
        {"mm.out", ERR, {F({2, 3}), F({3, 4}), F({8})}},
        {"mm.out", ERR, {F({3}), F({3, 2}), F({0})}},
        {"bmm.out", OK, {F({2, 2, 3}), F({2, 3, 4}), F({0})}},
        {"bmm.out", OK, {F({0, 2, 3}), F({0, 3, 1}), F({0, 2, 1})}},
        {"bmm.out", OK, {F({2, 2, 3}), F({2, 3, 4}), F({2, 2, 4}, {1, 2, 4})}},
        {"bmm.out", ERR, {F({2, 2, 3}), F({2, 3, 4}), T(bf16, {0})}},
        {"bmm.out", ERR, {F({2, 2, 3}), F({2, 3, 4}), F({2, 4})}},
        {"bmm.out", ERR, {F({2, 2, 3}), F({3, 3, 4}), F({0})}},
        {"addmm", OK, {F({4}), F({2, 3}), F({3, 4}), I(1), I(1)}},
        {"addmm", OK, {F({2, 4}), F({2, 3}), F({3, 4}, {1, 3}), D(0.5), D(2)}},
        {"addmm", OK, {F({}), F({2, 3}), F({3, 1}), I(1), I(1)}},
        {"addmm", ERR, {F({3}), F({2, 3}), F({3, 4}), I(1), I(1)}},
        {"addmm", ERR, {F({2, 4}), F({2, 3}), F({2, 4}), I(1), I(1)}},
        {"addmm.out", OK, {F({4}), F({2, 3}), F({3, 4}), I(1), I(1), F({2, 4})}},
        {"addmm.out", OK, {F({2, 4}), F({2, 3}), F({3, 4}), D(0.5), D(2), F({0})}},
        {"addmm.out", OK, {F({2, 4}), F({2, 3}), F({3, 4}), I(1), I(1), F({2, 4}, {1, 2})}},
        {"addmm.out", ERR, {F({4}), F({2, 3}), F({3, 4}), I(1), I(1), T(f64, {2, 4})}},
        {"addmm.out", ERR, {F({4}), F({2, 3}), F({3, 4}), I(1), I(1), F({4, 2})}},
        {"linear", OK, {F({2, 3}), F({4, 3}), F({4})}},
        {"linear", OK, {F({3}), F({4, 3}), None()}},
        {"linear", OK, {F({5, 2, 3}), F({4, 3}), None()}},
        {"linear", ERR, {F({2, 3}), F({4, 2}), None()}},
        {"linear", ERR, {F({2, 3}), F({4, 3}), F({5})}},
        {"linear.out", OK, {F({2, 3}), F({4, 3}), F({4}), F({2, 4})}},
        {"linear.out", OK, {F({3}), F({4, 3}), None(), F({0})}},
        {"linear.out", ERR, {F({2, 3}), F({4, 3}), None(), T(f64, {2, 4})}},
        {"linear.out", ERR, {F({2, 3}), F({4, 2}), None(), F({2, 4})}},

        // ---- views ----
        {"view", OK, {F({2, 3}), L({3, 2})}},
        {"view", OK, {F({2, 3}), L({-1})}},
        {"view", OK, {F({}), L({1, 1})}},
        {"view", OK, {F({2, 3}, {1, 2}), L({2, 3, 1})}},
        {"view", ERR, {F({2, 3}), L({4})}},
        {"view", ERR, {F({2, 3}, {1, 2}), L({6})}},
        {"view", ERR, {F({2, 3}), L({-1, -1})}},
        {"_unsafe_view", OK, {F({2, 3}), L({3, 2})}},
        {"_unsafe_view", OK, {F({2, 3}), L({-1})}},
        {"_unsafe_view", ERR, {F({2, 3}), L({4})}},
        {"reshape", OK, {F({2, 3}, {1, 2}), L({6})}},
        {"reshape", OK, {F({2, 3}), L({3, -1})}},
        {"reshape", OK, {F({0, 3}), L({3, 0})}},
        {"reshape", ERR, {F({2, 3}), L({-1, -1})}},
        {"reshape", ERR, {F({2, 3}), L({5})}},
        {"permute", OK, {F({2, 3, 4}), L({2, 0, 1})}},
        {"permute", OK, {F({}), L({})}},
        {"permute", ERR, {F({2, 3}), L({0, 0})}},
        {"permute", ERR, {F({2, 3}), L({0})}},
        {"transpose.int", OK, {F({2, 3, 4}), I(0), I(-1)}},
        {"transpose.int", OK, {F({2, 3}, {1, 2}), I(1), I(0)}},
        {"transpose.int", ERR, {F({2, 3}), I(0), I(2)}},
        {"t", OK, {F({2, 3})}},
        {"t", OK, {F({3})}},
        {"t", ERR, {F({2, 3, 4})}},
        {"expand", OK, {F({3, 1}), L({2, 3, 4}), B(false)}},
        {"expand", OK, {F({3, 1}), L({-1, 2}), B(false)}},
        {"expand", OK, {F({}), L({2, 0}), B(false)}},
        {"expand", ERR, {F({3}), L({4}), B(false)}},
        {"expand", ERR, {F({2, 3}), L({3}), B(false)}},
        {"broadcast_to", OK, {F({3, 1}), L({2, 3, 4})}},
        {"broadcast_to", ERR, {F({3}), L({4})}},
        {"expand_as", OK, {F({3, 1}), T(i64, {2, 3, 5})}},
        {"expand_as", ERR, {F({2, 3}), F({3})}},
        {"broadcast_tensors", OK, {TL({F({3, 1}), T(i64, {4}), F({})})}},
        {"broadcast_tensors", OK, {TL({})}},
        {"broadcast_tensors", ERR, {TL({F({3}), F({4})})}},
        {"as_strided", OK, {F({2, 3}), L({3, 2}), L({1, 3}), None()}},
        {"as_strided", OK, {F({2, 3}), L({2, 2}), L({1, 1}), I(3)}},
        {"as_strided", OK, {F({4}), L({0, 5}), L({1, 1}), I(100)}},
        {"as_strided", ERR, {F({2, 3}), L({7}), L({1}), I(0)}},
        {"as_strided", ERR, {F({2, 3}), L({2}), L({1, 1}), None()}},
        {"as_strided", ERR, {F({2, 3}), L({2}), L({-1}), None()}},
        {"as_strided", ERR, {F({2, 3}), L({2}), L({1}), I(-1)}},
        {"squeeze", OK, {F({2, 1, 3})}},
        {"squeeze", OK, {F({})}},
        {"squeeze", OK, {F({1, 0, 1})}},
        {"squeeze.dim", OK, {F({2, 1, 3}), I(1)}},
        {"squeeze.dim", OK, {F({2, 1, 3}), I(0)}},
        {"squeeze.dim", ERR, {F({2, 3}), I(2)}},
        {"unsqueeze", OK, {F({2, 3}), I(2)}},
        {"unsqueeze", OK, {F({}), I(0)}},
        {"unsqueeze", OK, {F({2, 3}, {1, 2}), I(-1)}},
        {"unsqueeze", ERR, {F({2, 3}), I(3)}},
        {"flatten.using_ints", OK, {F({2, 3, 4}), I(1), I(-1)}},
        {"flatten.using_ints", OK, {F({}), I(0), I(-1)}},
        {"flatten.using_ints", OK, {F({2, 3}, {1, 2}), I(0), I(1)}},
        {"flatten.using_ints", ERR, {F({2, 3, 4}), I(2), I(1)}},
        {"flatten.using_ints", ERR, {F({2, 3}), I(0), I(5)}},
        {"slice.Tensor", OK, {F({5, 3}), I(0), I(1), I(4), I(2)}},
        {"slice.Tensor", OK, {F({5, 3}), I(1), None(), None(), I(1)}},
        {"slice.Tensor", OK, {F({5}), I(0), I(-10), I(10), I(1)}},
        {"slice.Tensor", OK, {F({5}), I(0), I(4), I(2), I(1)}},
        {"slice.Tensor", ERR, {F({5}), I(0), None(), None(), I(0)}},
        {"slice.Tensor", ERR, {F({}), I(0), None(), None(), I(1)}},
        {"slice.Tensor", ERR, {F({5}), I(1), None(), None(), I(1)}},
        {"select.int", OK, {F({5, 3}), I(1), I(-1)}},
        {"select.int", OK, {F({5, 3}, {1, 5}), I(0), I(4)}},
        {"select.int", ERR, {F({5, 3}), I(0), I(5)}},
        {"select.int", ERR, {F({}), I(0), I(0)}},
        {"select.int", ERR, {F({5, 3}), I(2), I(0)}},
        {"narrow", OK, {F({5, 3}), I(0), I(1), I(3)}},
        {"narrow", OK, {F({5, 3}), I(1), I(3), I(0)}},
        {"narrow", ERR, {F({5, 3}), I(0), I(4), I(3)}},
        {"narrow", ERR, {F({5, 3}), I(0), I(0), I(-1)}},
        {"narrow", ERR, {F({}), I(0), I(0), I(1)}},
        {"split.sizes", OK, {F({5, 3}), L({2, 3}), I(0)}},
        {"split.sizes", ERR, {F({5, 3}), L({2, 2}), I(0)}},
        {"split_with_sizes", OK, {F({5, 3}, {1, 5}), L({1, 0, 2}), I(-1)}},
        {"split_with_sizes", OK, {F({0, 3}), L({0}), I(0)}},
        {"split_with_sizes", ERR, {F({5, 3}), L({6, -1}), I(0)}},
        {"split_with_sizes", ERR, {F({}), L({1}), I(0)}},
        {"split.Tensor", OK, {F({5, 3}), I(2), I(0)}},
        {"split.Tensor", OK, {F({5, 3}, {1, 5}), I(3), I(1)}},
        {"split.Tensor", ANY, {F({0, 3}), I(2), I(0)}},
        {"split.Tensor", ERR, {F({5, 3}), I(-1), I(0)}},
        {"split.Tensor", ERR, {F({}), I(1), I(0)}},
        {"split.Tensor", ERR, {F({5, 3}), I(1), I(2)}},
        {"chunk", OK, {F({5, 3}), I(2), I(0)}},
        {"chunk", OK, {F({5, 3}), I(5), I(-1)}},
        {"chunk", ERR, {F({5, 3}), I(0), I(0)}},
        {"chunk", ERR, {F({}), I(1), I(0)}},
        {"unbind.int", OK, {F({2, 3}), I(1)}},
        {"unbind.int", OK, {F({0, 3}), I(0)}},
        {"unbind.int", ERR, {F({2, 3}), I(2)}},
        {"unbind.int", ERR, {F({}), I(0)}},
        {"alias", OK, {F({2, 3}, {1, 2})}},
        {"alias", OK, {T(i64, {})}},
        {"detach", OK, {F({2, 3}, {1, 2})}},
        {"detach", OK, {T(b8, {0})}},

        // ---- copying and combining ----
        {"cat", OK, {TL({F({2, 3}), F({1, 3})}), I(0)}},
        {"cat", OK, {TL({F({2, 3}), T(i64, {2, 1})}), I(1)}},
        {"cat", OK, {TL({F({2, 3}), F({0})}), I(0)}},
        {"cat", OK, {TL({F({2, 3}, {1, 2}), F({2, 0})}), I(-1)}},
        {"cat", ERR, {TL({}), I(0)}},
        {"cat", ERR, {TL({F({2, 3}), F({2, 4})}), I(0)}},
        {"cat", ERR, {TL({F({})}), I(0)}},
        {"cat", ERR, {TL({F({2, 3})}), I(2)}},
        {"cat.out", OK, {TL({F({2, 3}), F({1, 3})}), I(0), F({3, 3})}},
        {"cat.out", OK, {TL({F({2, 3}), T(i64, {2, 1})}), I(1), T(f64, {0})}},
        {"cat.out", OK, {TL({F({2, 3}), F({0})}), I(0), F({2, 3}, {1, 2})}},
        {"cat.out", OK, {TL({T(i32, {0, 3}), T(i32, {0, 3})}), I(-1), F({0})}},
        {"cat.out", ERR, {TL({F({2, 3}), T(i64, {2, 1})}), I(1), T(i64, {0})}},
        {"cat.out", ERR, {TL({F({2, 3})}), I(0), F({3, 2})}},
        {"cat.out", ERR, {TL({F({2, 3}), F({2, 4})}), I(0), F({0})}},
        {"cat.out", ERR, {TL({}), I(0), F({0})}},
        {"cat.out", ERR, {TL({F({2, 3})}), I(0), F({2, 3}, {0, 1})}},  // expanded out
        {"stack", OK, {TL({F({2, 3}), F({2, 3})}), I(1)}},
        {"stack", OK, {TL({F({}), F({})}), I(0)}},
        {"stack", OK, {TL({F({2, 3}), T(i32, {2, 3})}), I(-1)}},
        {"stack", ERR, {TL({F({2, 3}), F({3, 2})}), I(0)}},
        {"stack", ERR, {TL({}), I(0)}},
        {"stack", ERR, {TL({F({2, 3})}), I(3)}},
        {"stack.out", OK, {TL({F({2, 3}), F({2, 3})}), I(1), F({0})}},
        {"stack.out", OK, {TL({F({}), T(i64, {})}), I(0), T(f64, {2})}},
        {"stack.out", OK, {TL({F({2, 3}), F({2, 3})}), I(-1), F({2, 3, 2}, {1, 2, 6})}},
        {"stack.out", ERR, {TL({F({2, 3}), F({2, 3})}), I(0), T(b8, {0})}},
        {"stack.out", ERR, {TL({F({2, 3}), F({2, 3})}), I(0), F({2, 3})}},
        {"stack.out", ERR, {TL({F({2, 3}), F({3, 2})}), I(0), F({0})}},
        {"stack.out", ERR, {TL({}), I(0), F({0})}},
        {"index_select", OK, {F({4, 3}), I(0), Idx({2}, 4)}},
        {"index_select", OK, {F({4, 3}), I(1), Idx({}, 3)}},
        {"index_select", OK, {F({4, 3}, {1, 4}), I(-1), Idx({0}, 3)}},
        {"index_select", ERR, {F({4, 3}), I(0), F({2})}},
        {"index_select", ERR, {F({4, 3}), I(2), Idx({2}, 3)}},
        {"index_select", ERR, {F({4, 3}), I(0), Idx({2, 2}, 4)}},
        {"index_select.out", OK, {F({4, 3}), I(0), Idx({2}, 4), F({2, 3})}},
        {"index_select.out", OK, {F({4, 3}, {1, 4}), I(1), Idx({5}, 3), F({0})}},
        {"index_select.out", ERR, {F({4, 3}), I(0), Idx({2}, 4), T(f64, {2, 3})}},
        {"index_select.out", ERR, {F({4, 3}), I(0), Idx({2}, 4), F({3, 3})}},
        {"gather", OK, {F({3, 4}), I(1), Idx({3, 2}, 4), B(false)}},
        {"gather", OK, {F({3, 4}), I(0), Idx({2, 4}, 3), B(false)}},
        {"gather", OK, {F({}), I(0), Idx({}, 1), B(false)}},
        {"gather", ERR, {F({3, 4}), I(1), Idx({3}, 4), B(false)}},
        {"gather", ERR, {F({3, 4}), I(2), Idx({3, 2}, 3), B(false)}},
        {"gather", ERR, {F({3, 4}), I(1), F({3, 2}), B(false)}},
        {"gather", ERR, {F({3, 4}), I(1), Idx({4, 2}, 4), B(false)}},
        {"gather.out", OK, {F({3, 4}), I(1), Idx({3, 2}, 4), B(false), F({3, 2})}},
        {"gather.out", OK, {F({3, 4}), I(0), Idx({2, 4}, 3), B(false), F({2, 4}, {1, 2})}},
        {"gather.out", ERR, {F({3, 4}), I(1), Idx({3, 2}, 4), B(false), T(f64, {3, 2})}},
        {"gather.out", ERR, {F({3, 4}), I(1), Idx({3, 2}, 4), B(false), F({2, 2})}},
        {"masked_fill.Scalar", OK, {F({2, 3}), T(b8, {3}), D(0.5)}},
        {"masked_fill.Scalar", OK, {T(i64, {2, 3}), T(b8, {2, 1}), I(7)}},
        {"masked_fill.Scalar", OK, {F({}), T(b8, {}), I(1)}},
        {"masked_fill.Scalar", ANY, {F({3}), T(b8, {2, 3}), I(1)}},
        {"masked_fill.Scalar", ERR, {F({2, 3}), F({3}), D(1)}},
        {"masked_fill.Scalar", ERR, {F({2, 3}), T(b8, {4}), D(1)}},
        {"masked_fill_.Scalar", OK, {F({2, 3}), T(b8, {3}), D(2)}},
        {"masked_fill_.Scalar", OK, {T(i64, {2, 3}, {1, 2}), T(b8, {2, 3}), I(2)}},
        {"masked_fill_.Scalar", ANY, {T(i64, {2}), T(b8, {2}), D(0.5)}},
        {"masked_fill_.Scalar", ERR, {F({3}), T(b8, {2, 3}), D(1)}},
        {"masked_fill_.Scalar", ERR, {F({2, 3}), F({2, 3}), D(1)}},

        // ---- advanced indexing ----
        {"nonzero_numpy", DATA, {F({2, 3})}},
        {"nonzero_numpy", DATA, {T(b8, {})}},
        {"nonzero", DATA, {F({2, 3})}},
        {"nonzero", DATA, {T(b8, {})}},
        {"nonzero", DATA, {T(i64, {0, 3})}},
        {"index.Tensor", OK, {F({4, 3}), TL({Idx({2}, 4)})}},
        {"index.Tensor", OK, {F({4, 3}), TL({None(), Idx({2, 2}, 3)})}},
        {"index.Tensor", OK, {F({2, 3, 4}), TL({Idx({2}, 2), None(), Idx({2}, 4)})}},
        {"index.Tensor", OK, {F({4, 3}, {1, 4}), TL({Idx({2, 1}, 4), IdxT(i32, {3}, 3)})}},
        {"index.Tensor", OK, {T(i64, {4, 3}), TL({Idx({0}, 4)})}},
        {"index.Tensor", OK, {F({4, 3}), TL({Idx({}, 4), None()})}},
        {"index.Tensor", DATA, {F({4, 3}), TL({Mask({4}, 2)})}},
        {"index.Tensor", DATA, {F({2, 4, 3}), TL({None(), Mask({4, 3}, 3, u8)})}},
        {"index.Tensor", ERR, {F({4, 3}), TL({F({2})})}},
        {"index.Tensor", ERR, {F({4, 3}), TL({T(PITH_INT8, {2})})}},
        {"index.Tensor", ERR, {F({4}), TL({Idx({1}, 4), Idx({1}, 1)})}},
        {"index.Tensor", ERR, {F({0, 3}), TL({Idx({2}, 1)})}},
        {"index.Tensor", ERR, {F({4, 3}), TL({Idx({2}, 4), Idx({3}, 3)})}},
        {"index.Tensor", ERR, {F({4, 3}), TL({})}},
        {"index.Tensor", ERR, {F({4, 3}), TL({Mask({3}, 2)})}},
        {"index_put_", OK, {F({4, 3}), TL({Idx({2}, 4)}), F({3}), B(false)}},
        {"index_put_", OK, {F({4, 3}, {1, 4}), TL({None(), Idx({2}, 3)}), T(i64, {4, 1}), B(true)}},
        {"index_put_", OK, {F({2, 3, 4}), TL({Idx({2}, 2), None(), Idx({2}, 4)}), F({}), B(false)}},
        {"index_put_", DATA, {F({4, 3}), TL({Mask({4}, 2)}), F({}), B(false)}},
        {"index_put_", ERR, {F({4, 3}), TL({Idx({2}, 4)}), F({4}), B(false)}},
        {"index_put_", ERR, {F({4, 3}), TL({Idx({2}, 4)}), F({1, 2, 3}), B(false)}},
        {"index_put_", ERR, {F({4, 3}), TL({F({2})}), F({}), B(false)}},
        {"index_put", OK, {F({4, 3}), TL({Idx({2}, 4)}), F({3}), B(false)}},
        {"index_put", OK, {T(i32, {4, 3}, {1, 4}), TL({None(), Idx({2}, 3)}), F({}), B(true)}},
        {"index_put", DATA, {F({4, 3}), TL({Mask({4, 3}, 2)}), F({}), B(false)}},
        {"index_put", ERR, {F({4, 3}), TL({Idx({2}, 4), Idx({3}, 3)}), F({}), B(false)}},
        {"masked_select", DATA, {F({2, 3}), Mask({3}, 2)}},
        {"masked_select", DATA, {F({3}, {2}), Mask({2, 3}, 4)}},
        {"masked_select", ERR, {F({2, 3}), Mask({3}, 2, u8)}},
        {"masked_select", ERR, {F({2, 3}), Mask({4}, 2)}},

        {"tril", OK, {F({3, 4}), I(0)}},
        {"tril", OK, {F({2, 3, 4}, {1, 2, 6}), I(-1)}},
        {"tril", OK, {T(i64, {0, 3}), I(1)}},
        {"tril", ERR, {F({3}), I(0)}},
        {"triu", OK, {F({3, 4}), I(1)}},
        {"triu", OK, {T(b8, {2, 2, 2}), I(0)}},
        {"triu", ERR, {F({}), I(0)}},
        {"tril_", OK, {F({3, 4}), I(0)}},
        {"tril_", OK, {F({2, 3, 4}, {1, 2, 6}), I(-1)}},
        {"tril_", OK, {T(i64, {0, 3}), I(1)}},
        {"tril_", ERR, {F({3}), I(0)}},
        {"triu_", OK, {T(b8, {2, 2, 2}), I(1)}},
        {"triu_", ERR, {F({}), I(0)}},
        {"isnan", OK, {F({2, 3})}},
        {"isnan", OK, {T(i64, {3}, {2})}},
        {"isinf", OK, {T(f16, {})}},
        {"isinf", OK, {T(b8, {0})}},
        {"isposinf", OK, {T(bf16, {2})}},
        {"isneginf", OK, {T(f64, {2, 2}, {1, 2})}},
        {"isfinite", OK, {F({3})}},
        {"isfinite", OK, {T(u8, {2})}},
        {"embedding", OK, {F({10, 3}), Idx({2, 4}, 10), I(-1), B(false), B(false)}},
        {"embedding", OK, {F({10, 3}), Idx({}, 10), I(-1), B(false), B(false)}},
        {"embedding", OK, {T(f64, {10, 3}, {1, 10}), Idx({0}, 10), I(2), B(false), B(false)}},
        {"embedding", ERR, {F({10, 3}), F({2}), I(-1), B(false), B(false)}},
        {"embedding", ERR, {F({10}), Idx({2}, 10), I(-1), B(false), B(false)}},
        {"embedding.out", OK, {F({10, 3}), Idx({2, 4}, 10), I(-1), B(false), B(false), F({2, 4, 3})}},
        {"embedding.out", OK, {F({10, 3}), Idx({}, 10), I(-1), B(false), B(false), F({0})}},
        {"embedding.out", ERR, {F({10, 3}), Idx({2}, 10), I(-1), B(false), B(false), T(f64, {2, 3})}},
        {"embedding.out", ERR, {F({10, 3}), Idx({2}, 10), I(-1), B(false), B(false), F({3, 3})}},

        // ---- normalisation ----
        {"softmax.int", OK, {F({2, 3}), I(1), None()}},
        {"softmax.int", OK, {F({}), I(0), None()}},
        {"softmax.int", OK, {F({2, 3}, {1, 2}), I(0), DT(f64)}},
        {"softmax.int", OK, {T(f16, {0, 3}), I(-1), None()}},
        {"softmax.int", ERR, {T(i64, {2, 3}), I(1), None()}},
        {"softmax.int", ERR, {F({2, 3}), I(2), None()}},
        {"softmax.int_out", OK, {F({2, 3}), I(1), None(), F({2, 3})}},
        {"softmax.int_out", OK, {F({2, 3}, {1, 2}), I(0), DT(f64), T(f64, {0})}},
        {"softmax.int_out", ERR, {F({2, 3}), I(1), None(), T(f64, {2, 3})}},
        {"softmax.int_out", ERR, {F({2, 3}), I(1), None(), F({3, 2})}},
        {"log_softmax.int", OK, {F({2, 3}), I(-1), None()}},
        {"log_softmax.int", OK, {T(f64, {}), I(-1), None()}},
        {"log_softmax.int", OK, {F({2, 3}), I(1), DT(f64)}},
        {"log_softmax.int", ERR, {T(i32, {2, 3}), I(1), None()}},
        {"log_softmax.int", ERR, {F({2, 3}), I(-3), None()}},
        {"log_softmax.int_out", OK, {F({2, 3}), I(-1), None(), F({2, 3}, {1, 2})}},
        {"log_softmax.int_out", OK, {T(i64, {2, 3}), I(1), DT(f32), F({0})}},
        {"log_softmax.int_out", ERR, {F({2, 3}), I(1), DT(f64), F({2, 3})}},
        {"log_softmax.int_out", ERR, {T(i64, {2, 3}), I(1), None(), T(i64, {2, 3})}},
        {"layer_norm", OK, {F({2, 3}), L({3}), F({3}), F({3}), D(1e-5), B(true)}},
        {"layer_norm", OK, {F({2, 3, 4}), L({3, 4}), None(), None(), D(1e-5), B(true)}},
        {"layer_norm", OK, {F({2, 3}, {1, 2}), L({3}), None(), F({3}), D(1e-5), B(false)}},
        {"layer_norm", OK, {F({0, 3}), L({3}), None(), None(), D(1e-5), B(true)}},
        {"layer_norm", ERR, {F({2, 3}), L({4}), None(), None(), D(1e-5), B(true)}},
        {"layer_norm", ERR, {F({2, 3}), L({3}), F({4}), None(), D(1e-5), B(true)}},
        {"layer_norm", ERR, {F({2, 3}), L({3}), None(), F({2}), D(1e-5), B(true)}},
        {"layer_norm", ANY, {T(i64, {2, 3}), L({3}), None(), None(), D(1e-5), B(true)}},
        {"layer_norm.out", OK, {F({2, 3}), L({3}), F({3}), F({3}), D(1e-5), B(true), F({2, 3})}},
        {"layer_norm.out", OK, {F({2, 3}), L({3}), None(), None(), D(1e-5), B(true), F({2, 3}, {1, 2})}},
        {"layer_norm.out", OK, {F({0, 3}), L({3}), None(), None(), D(1e-5), B(true), F({0})}},
        {"layer_norm.out", ERR, {F({2, 3}), L({3}), None(), None(), D(1e-5), B(true), T(f64, {2, 3})}},
        {"layer_norm.out", ERR, {F({2, 3}), L({3}), None(), None(), D(1e-5), B(true), F({3})}},
        {"_layer_norm_backward_input", OK, {F({2, 3}), F({2, 3}), L({3}), F({3}), D(1e-5)}},
        {"_layer_norm_backward_input", OK, {T(f64, {2, 3, 4}), T(f64, {2, 3, 4}, {12, 1, 3}), L({3, 4}), None(), D(1e-5)}},
        {"_layer_norm_backward_input", OK, {T(bf16, {0, 3}), T(bf16, {0, 3}), L({3}), None(), D(1e-5)}},
        {"_layer_norm_backward_input", ERR, {F({2, 3}), F({2, 3}), L({4}), None(), D(1e-5)}},
        {"_layer_norm_backward_input", ERR, {F({2, 3}), F({2, 3}), L({3}), F({4}), D(1e-5)}},
        {"_layer_norm_backward_input", ERR, {F({3}), F({2, 3}), L({3}), None(), D(1e-5)}},
        {"_layer_norm_backward_input", ERR, {T(f64, {2, 3}), F({2, 3}), L({3}), None(), D(1e-5)}},
        {"_layer_norm_backward_input", ANY, {T(i64, {2, 3}), T(i64, {2, 3}), L({3}), None(), D(1e-5)}},
        {"_scaled_dot_product_fused_attention", OK, {F({2, 3, 4}), F({2, 5, 4}), F({2, 5, 3}), None(), B(false), D(0.5)}},
        {"_scaled_dot_product_fused_attention", OK, {F({2, 2, 3, 4}), F({2, 2, 3, 4}), F({2, 2, 3, 2}), None(), B(true), D(0.5)}},
        {"_scaled_dot_product_fused_attention", OK, {T(f64, {2, 3, 4}), T(f64, {2, 5, 4}), T(f64, {2, 5, 3}), Mask({3, 5}, 2), B(false), D(1.0)}},
        {"_scaled_dot_product_fused_attention", OK, {F({2, 3, 4}), F({2, 5, 4}), F({2, 5, 3}), F({1, 5}), B(false), D(1.0)}},
        {"_scaled_dot_product_fused_attention", OK, {F({0, 3, 4}), F({0, 5, 4}), F({0, 5, 3}), None(), B(false), D(1.0)}},
        {"_scaled_dot_product_fused_attention", ERR, {F({2, 3, 4}), F({3, 5, 4}), F({3, 5, 3}), None(), B(false), D(1.0)}},
        {"_scaled_dot_product_fused_attention", ERR, {F({2, 3, 4}), F({2, 5, 3}), F({2, 5, 3}), None(), B(false), D(1.0)}},
        {"_scaled_dot_product_fused_attention", ERR, {F({2, 3, 4}), F({2, 5, 4}), F({2, 5, 3}), F({4, 5}), B(false), D(1.0)}},
        {"_scaled_dot_product_fused_attention", ERR, {F({2, 3, 4}), F({2, 5, 4}), F({2, 5, 3}), F({3, 5}), B(true), D(1.0)}},
        {"_scaled_dot_product_fused_attention", ERR, {T(i64, {2, 3, 4}), T(i64, {2, 5, 4}), T(i64, {2, 5, 3}), None(), B(false), D(1.0)}},
        {"_scaled_dot_product_attention_weights", OK, {F({2, 3, 4}), F({2, 5, 4}), F({2, 3}), None(), B(false), D(0.5)}},
        {"_scaled_dot_product_attention_weights", OK, {F({2, 3, 4}), F({2, 3, 4}), F({2, 3}), None(), B(true), D(0.5)}},
        {"_scaled_dot_product_attention_weights", OK, {F({2, 3, 4}), F({2, 5, 4}), F({2, 3}), Mask({3, 5}, 2), B(false), D(0.5)}},
        {"_scaled_dot_product_attention_weights", ERR, {F({2, 3, 4}), F({2, 5, 4}), F({2, 4}), None(), B(false), D(0.5)}},
        {"_scaled_dot_product_attention_weights", ERR, {F({2, 3, 4}), F({2, 5, 4}), T(f64, {2, 3}), None(), B(false), D(0.5)}},
        {"_ctc_loss", OK, {F({5, 2, 4}), Idx({2, 2}, 3), L({5, 4}), L({2, 1}), I(3), B(false)}},
        {"_ctc_loss", OK, {T(f64, {5, 2, 4}), Idx({3}, 3), L({5, 4}), L({2, 1}), I(3), B(true)}},
        {"_ctc_loss", OK, {F({5, 2, 4}), IdxT(i32, {2, 3}, 3), L({0, 4}), L({0, 0}), I(3), B(false)}},
        {"_ctc_loss", ERR, {F({3, 0, 4}), Idx({0, 0}, 3), L({}), L({}), I(0), B(false)}},
        {"_ctc_loss", ERR, {F({5, 4}), Idx({2, 2}, 3), L({5, 4}), L({2, 1}), I(3), B(false)}},
        {"_ctc_loss", ERR, {F({5, 2, 4}), Idx({2, 2}, 3), L({6, 4}), L({2, 1}), I(3), B(false)}},
        {"_ctc_loss", ERR, {F({5, 2, 4}), Idx({2, 2}, 3), L({5, 4}), L({3, 1}), I(3), B(false)}},
        {"_ctc_loss", ERR, {F({5, 2, 4}), Idx({2, 2}, 3), L({5, 4}), L({2, 1}), I(4), B(false)}},
        {"_ctc_loss", ERR, {F({5, 2, 4}), Idx({4}, 3), L({5, 4}), L({2, 1}), I(3), B(false)}},
        {"_ctc_loss", ERR, {F({5, 2, 4}), F({2, 2}), L({5, 4}), L({2, 1}), I(3), B(false)}},
        {"_ctc_loss_backward", OK, {F({2}), F({5, 2, 4}), Idx({2, 2}, 3), L({5, 4}), L({2, 1}), F({2}), F({2, 5, 5}), I(3), B(false)}},
        {"_ctc_loss_backward", OK, {T(f64, {2}), T(f64, {5, 2, 4}), Idx({3}, 3), L({5, 4}), L({2, 1}), T(f64, {2}), T(f64, {2, 5, 5}), I(3), B(true)}},
        {"_ctc_loss_backward", ERR, {F({2}), F({5, 2, 4}), Idx({2, 2}, 3), L({5, 4}), L({2, 1}), F({2}), F({2, 5, 3}), I(3), B(false)}},
        {"_ctc_loss_backward", ERR, {F({2}), F({5, 2, 4}), Idx({2, 2}, 3), L({5, 4}), L({2, 1}), T(f64, {2}), F({2, 5, 5}), I(3), B(false)}},

        // ---- factories (the device is CPU in one run and Meta in the other) ----
        {"empty", OK, {L({2, 3}), None(), Dev()}},
        {"empty", OK, {L({}), DT(i64), Dev()}},
        {"empty", OK, {L({0, 3}), DT(b8), Dev()}},
        {"empty", ERR, {L({-1}), None(), Dev()}},
        {"empty_strided", OK, {L({2, 3}), L({1, 2}), None(), Dev()}},
        {"empty_strided", OK, {L({}), L({}), DT(f16), Dev()}},
        {"empty_strided", OK, {L({3, 0}), L({0, 1}), DT(i32), Dev()}},
        {"empty_strided", ERR, {L({2, 3}), L({1}), None(), Dev()}},
        {"empty_strided", ERR, {L({-2}), L({1}), None(), Dev()}},
        {"zeros", OK, {L({2, 3}), None(), Dev()}},
        {"zeros", OK, {L({}), DT(f64), Dev()}},
        {"zeros", OK, {L({0}), DT(b8), Dev()}},
        {"zeros", ERR, {L({2, -1}), None(), Dev()}},
        {"ones", OK, {L({2, 3}), DT(i32), Dev()}},
        {"ones", OK, {L({}), None(), Dev()}},
        {"ones", ERR, {L({-1}), None(), Dev()}},
        {"full", OK, {L({2, 3}), D(1.5), None(), Dev()}},
        {"full", OK, {L({2}), I(3), None(), Dev()}},
        {"full", OK, {L({}), B(true), None(), Dev()}},
        {"full", OK, {L({0, 2}), D(2), DT(f16), Dev()}},
        {"full", ERR, {L({-2}), I(1), None(), Dev()}},
        {"arange.start_step", OK, {I(0), I(5), I(1), None(), Dev()}},
        {"arange.start_step", OK, {D(0), D(1), D(0.25), None(), Dev()}},
        {"arange.start_step", OK, {I(0), I(0), I(1), None(), Dev()}},
        {"arange.start_step", OK, {I(5), I(0), I(-2), DT(f64), Dev()}},
        {"arange.start_step", ERR, {I(0), I(5), I(0), None(), Dev()}},
        {"arange.start_step", ERR, {I(5), I(0), I(1), None(), Dev()}},
        {"linspace", OK, {D(0), D(1), I(5), None(), Dev()}},
        {"linspace", OK, {I(0), I(1), I(0), DT(i64), Dev()}},
        {"linspace", ERR, {I(0), I(1), I(-1), None(), Dev()}},
        {"eye", OK, {I(3), None(), None(), Dev()}},
        {"eye", OK, {I(2), I(4), DT(i64), Dev()}},
        {"eye", OK, {I(0), I(3), DT(b8), Dev()}},
        {"eye", ERR, {I(-1), None(), None(), Dev()}},
        {"eye", ERR, {I(2), I(-1), None(), Dev()}},
        {"rand", OK, {L({2, 3}), None(), None(), Dev()}},
        {"rand", OK, {L({}), None(), DT(f64), Dev()}},
        {"rand", OK, {L({0, 2}), None(), DT(bf16), Dev()}},
        {"rand", ERR, {L({-1}), None(), None(), Dev()}},
        {"rand", ERR, {L({2}), None(), DT(i64), Dev()}},
        {"randn", OK, {L({2, 3}), None(), None(), Dev()}},
        {"randn", OK, {L({}), None(), DT(f16), Dev()}},
        {"randn", ERR, {L({-1}), None(), None(), Dev()}},
        {"randn", ERR, {L({2}), None(), DT(i32), Dev()}},
        {"randint.low", OK, {I(0), I(10), L({2, 3}), None(), None(), Dev()}},
        {"randint.low", OK, {I(0), I(10), L({3}), None(), DT(f32), Dev()}},
        {"randint.low", OK, {I(-5), I(5), L({}), None(), DT(i32), Dev()}},
        {"randint.low", ERR, {I(5), I(5), L({2}), None(), None(), Dev()}},
        {"randint.low", ERR, {I(0), I(10), L({-1}), None(), None(), Dev()}},
        {"randint", OK, {I(10), L({2, 3}), None(), None(), Dev()}},
        {"randint", ERR, {I(0), L({2}), None(), None(), Dev()}},
        {"randperm", OK, {I(5), None(), None(), Dev()}},
        {"randperm", OK, {I(0), None(), DT(f32), Dev()}},
        {"randperm", OK, {I(6), None(), DT(u8), Dev()}},
        {"randperm", ERR, {I(-1), None(), None(), Dev()}},
        {"randperm", ERR, {I(300), None(), DT(u8), Dev()}},
        {"uniform_", OK, {F({2, 3}), D(-1), D(2), None()}},
        {"uniform_", OK, {T(f64, {2, 3}, {1, 2}), D(0), D(1), None()}},
        {"uniform_", OK, {T(f16, {0, 3}), D(0), D(1), None()}},
        {"uniform_", ERR, {F({3}), D(1), D(0), None()}},
        {"uniform_", ERR, {T(i64, {3}), D(0), D(1), None()}},
        {"uniform_", ERR, {F({3}, {0}), D(0), D(1), None()}},
        {"normal_", OK, {F({4}), D(0), D(1), None()}},
        {"normal_", OK, {T(bf16, {2, 2}, {1, 2}), D(3), D(0), None()}},
        {"normal_", ERR, {F({2}), D(0), D(-1), None()}},
        {"normal_", ERR, {T(b8, {2}), D(0), D(1), None()}},
        {"arange", OK, {I(5), None(), Dev()}},
        {"arange", OK, {D(2.5), None(), Dev()}},
        {"arange", ERR, {I(-1), None(), Dev()}},

        // ---- sorting, scans and sampling ----
        {"sort", OK, {F({2, 3}), I(-1), B(false)}},
        {"sort", OK, {T(i64, {2, 3}, {1, 2}), I(0), B(true)}},
        {"sort", OK, {T(b8, {}), I(0), B(false)}},
        {"sort", OK, {T(f16, {0, 3}), I(1), B(false)}},
        {"sort", ERR, {F({2, 3}), I(2), B(false)}},
        {"sort", ERR, {F({}), I(1), B(false)}},
        {"sort.stable", OK, {T(bf16, {4}), B(true), I(0), B(true)}},
        {"sort.stable", OK, {F({2, 3}), None(), I(-2), B(false)}},
        {"sort.stable", ERR, {F({2, 3}), B(true), I(-3), B(false)}},
        {"sort.values", OK, {F({2, 3}), I(1), B(false), F({2, 3}), T(i64, {2, 3})}},
        {"sort.values", OK, {F({2, 3}), I(0), B(true), F({0}), T(i64, {0})}},
        {"sort.values", OK, {T(i32, {3, 2}), I(0), B(false), T(i32, {3, 2}, {1, 3}),
                             T(i64, {3, 2}, {1, 3})}},
        {"sort.values", ERR, {F({2, 3}), I(1), B(false), T(f64, {2, 3}), T(i64, {2, 3})}},
        {"sort.values", ERR, {F({2, 3}), I(1), B(false), F({2, 3}), T(i32, {2, 3})}},
        {"sort.values", ERR, {F({2, 3}), I(1), B(false), F({4}), T(i64, {2, 3})}},
        {"sort.values", ERR, {F({2, 3}), I(1), B(false), F({2, 3}, {0, 1}), T(i64, {2, 3})}},
        {"sort.values_stable", OK, {F({3}), B(true), I(0), B(false), F({0}), T(i64, {3})}},
        {"sort.values_stable", ERR, {F({3}), B(true), I(1), B(false), F({3}), T(i64, {3})}},
        {"argsort", OK, {F({2, 3}), I(-1), B(false)}},
        {"argsort", OK, {T(u8, {}), I(-1), B(true)}},
        {"argsort", ERR, {F({2, 3}), I(5), B(false)}},
        {"argsort.stable", OK, {T(PITH_INT16, {4, 2}), B(true), I(0), B(false)}},
        {"argsort.stable", ERR, {F({3}), B(false), I(-2), B(false)}},
        {"argsort.stable_out", OK, {F({2, 3}), B(true), I(1), B(true), T(i64, {0})}},
        {"argsort.stable_out", ERR, {F({2, 3}), B(true), I(1), B(true), F({2, 3})}},
        {"topk", OK, {F({2, 5}), I(3), I(-1), B(true), B(true)}},
        {"topk", OK, {T(i64, {4, 2}, {1, 4}), I(4), I(0), B(false), B(true)}},
        {"topk", OK, {F({}), I(1), I(0), B(true), B(false)}},
        {"topk", OK, {F({0, 3}), I(2), I(1), B(true), B(true)}},
        {"topk", ERR, {F({2, 5}), I(6), I(-1), B(true), B(true)}},
        {"topk", ERR, {F({2, 5}), I(-1), I(-1), B(true), B(true)}},
        {"topk", ERR, {T(b8, {3}), I(1), I(0), B(true), B(true)}},
        {"topk", ERR, {F({2, 5}), I(1), I(2), B(true), B(true)}},
        {"topk.values", OK, {F({2, 5}), I(2), I(1), B(true), B(true), F({0}), T(i64, {0})}},
        {"topk.values", ERR, {F({2, 5}), I(2), I(1), B(true), B(true), F({2, 2}), F({2, 2})}},
        {"cumsum", OK, {F({2, 3}), I(1), None()}},
        {"cumsum", OK, {T(i32, {2, 3}, {1, 2}), I(0), None()}},
        {"cumsum", OK, {T(b8, {}), I(-1), None()}},
        {"cumsum", OK, {T(f16, {0, 3}), I(0), DT(f64)}},
        {"cumsum", ERR, {F({2, 3}), I(2), None()}},
        {"cumsum", ERR, {F({2, 3}), I(0), DT(b8)}},
        {"cumsum.out", OK, {T(i64, {3}), I(0), None(), F({3})}},
        {"cumsum.out", OK, {F({2, 3}), I(1), DT(f64), T(f64, {0})}},
        {"cumsum.out", ERR, {F({2, 3}), I(1), DT(f64), F({2, 3})}},
        {"cumsum.out", ERR, {F({2, 3}), I(1), None(), F({3, 2})}},
        {"cumsum_", OK, {T(i32, {2, 3}, {1, 2}), I(1), None()}},
        {"cumsum_", ERR, {T(i32, {2, 3}), I(1), DT(i64)}},
        {"cumsum_", ERR, {T(b8, {3}), I(0), None()}},
        {"cumsum_", ERR, {F({3}, {0}), I(0), None()}},
        {"cumprod", OK, {T(u8, {4}), I(0), None()}},
        {"cumprod", OK, {F({2, 3}), I(-1), DT(bf16)}},
        {"cumprod", ERR, {F({}), I(1), None()}},
        {"cumprod.out", OK, {F({2, 3}), I(0), None(), F({2, 3}, {1, 2})}},
        {"cumprod.out", ERR, {F({2, 3}), I(0), None(), T(b8, {2, 3})}},
        {"cumprod_", OK, {T(f64, {2, 2}), I(0), None()}},
        {"cumprod_", ERR, {F({2, 3}), I(-3), None()}},
        {"multinomial", OK, {F({5}), I(3), B(false), None()}},
        {"multinomial", OK, {T(f64, {2, 4}, {1, 2}), I(6), B(true), None()}},
        {"multinomial", OK, {F({0, 3}), I(2), B(false), None()}},
        {"multinomial", OK, {T(f16, {3}), I(1), B(true), None()}},
        {"multinomial", ERR, {F({5}), I(6), B(false), None()}},
        {"multinomial", ERR, {F({5}), I(0), B(true), None()}},
        {"multinomial", ERR, {F({}), I(1), B(true), None()}},
        {"multinomial", ERR, {F({2, 2, 2}), I(1), B(true), None()}},
        {"multinomial", ERR, {T(i64, {3}), I(1), B(true), None()}},
        {"multinomial.out", OK, {F({2, 3}), I(2), B(false), None(), T(i64, {0})}},
        {"multinomial.out", OK, {F({3}), I(4), B(true), None(), T(i64, {4})}},
        {"multinomial.out", ERR, {F({3}), I(2), B(false), None(), F({2})}},
        {"multinomial.out", ERR, {F({3}), I(2), B(false), None(), T(i64, {3})}},
        // the optimizer kernels (kernels/optim.c): in place, nothing returned
        {"_fused_sgd_", OK, {TL({F({2, 3}), F({})}), TL({F({2, 3}), F({})}), TL({F({2, 3}), F({})}), D(0.01), D(0.9), D(0.1), D(0), B(true), B(false), B(false), None(), None()}},
        {"_fused_sgd_", OK, {TL({T(f64, {2, 2}, {1, 2})}), TL({T(f64, {2, 2})}), TL({}), D(0), D(0), D(0.1), D(0), B(false), B(true), B(true), None(), None()}},
        {"_fused_sgd_", ERR, {TL({F({2}), F({3})}), TL({F({2})}), TL({}), D(0), D(0), D(0.1), D(0), B(false), B(false), B(false), None(), None()}},
        {"_fused_adam_", OK, {TL({F({3}), F({})}), TL({F({3}), F({})}), TL({F({3}), F({})}), TL({F({3}), F({})}), TL({}), TL({F({}), F({})}), D(1e-3), D(0.9), D(0.999), D(0), D(1e-8), B(false), B(false), None(), None()}},
        {"_fused_adam_", OK, {TL({T(f64, {2, 2}, {1, 2})}), TL({T(f64, {2, 2})}), TL({T(f64, {2, 2})}), TL({T(f64, {2, 2})}), TL({T(f64, {2, 2})}), TL({T(f64, {})}), D(1e-3), D(0.9), D(0.999), D(0.1), D(1e-8), B(true), B(true), None(), None()}},
        {"_fused_adam_", ERR, {TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({}), TL({F({2})}), D(1e-3), D(0.9), D(0.999), D(0), D(1e-8), B(false), B(false), None(), None()}},
        {"_fused_adamw_", OK, {TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({}), TL({F({})}), D(1e-3), D(0.9), D(0.999), D(0.01), D(1e-8), B(false), B(false), None(), None()}},
        {"_fused_adamw_", ERR, {TL({T(i64, {3})}), TL({T(i64, {3})}), TL({T(i64, {3})}), TL({T(i64, {3})}), TL({}), TL({F({})}), D(1e-3), D(0.9), D(0.999), D(0.01), D(1e-8), B(false), B(false), None(), None()}},
        {"_fused_adagrad_", OK, {TL({F({2, 2})}), TL({F({2, 2})}), TL({F({2, 2})}), TL({F({})}), D(0.01), D(0), D(0), D(1e-10), B(false), None(), None()}},
        {"_fused_adagrad_", ERR, {TL({F({2, 2})}), TL({F({2, 2})}), TL({F({2, 3})}), TL({F({})}), D(0.01), D(0), D(0), D(1e-10), B(false), None(), None()}},
        {"_fused_rmsprop_", OK, {TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({})}), D(0.01), D(0.99), D(1e-8), D(0), D(0.9), B(true), B(false)}},
        {"_fused_rmsprop_", ERR, {TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({}), TL({}), TL({F({})}), D(0.01), D(0.99), D(1e-8), D(0), D(0.9), B(false), B(false)}},
        {"_fused_adamax_", OK, {TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({})}), D(2e-3), D(0.9), D(0.999), D(1e-8), D(0), B(false)}},
        {"_fused_adamax_", ERR, {TL({F({3})}), TL({F({3})}), TL({T(f64, {3})}), TL({F({3})}), TL({F({})}), D(2e-3), D(0.9), D(0.999), D(1e-8), D(0), B(false)}},
        {"_fused_nadam_", OK, {TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({})}), TL({F({})}), D(2e-3), D(0.9), D(0.999), D(0), D(1e-8), D(4e-3), B(false), B(false)}},
        {"_fused_nadam_", ERR, {TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({}), TL({F({})}), D(2e-3), D(0.9), D(0.999), D(0), D(1e-8), D(4e-3), B(false), B(false)}},
        {"_fused_adadelta_", OK, {TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({})}), D(1.0), D(0.9), D(1e-6), D(0), B(false)}},
        {"_fused_adadelta_", ERR, {TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({T(i64, {})}), D(1.0), D(0.9), D(1e-6), D(0), B(false)}},
        {"_fused_radam_", OK, {TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({})}), D(1e-3), D(0.9), D(0.999), D(0), D(1e-8), B(false), B(false)}},
        {"_fused_radam_", ERR, {TL({F({3})}), TL({F({3})}), TL({F({3})}), TL({F({3}, {2})}), TL({F({}), F({})}), D(1e-3), D(0.9), D(0.999), D(0), D(1e-8), B(false), B(false)}},
    };
    return cases;
}

}  // namespace

const std::vector<Case> &all_cases()
{
    static const std::vector<Case> cases = [] {
        std::vector<Case> v;
        add_unary_cases(v);
        add_binary_cases(v);
        add_shape_cases(v);
        const std::vector<Case> &h = hand_written_cases();
        v.insert(v.end(), h.begin(), h.end());
        return v;
    }();
    return cases;
}

// Ops with no input that fails validation: every input is accepted (the float-only unary
// ops compute integers and bool in the default float dtype; the rest are copies or views
// that fit any tensor).
const std::set<std::string> &ops_without_error_path()
{
    static const std::set<std::string> names = {
#define PITH_TEST_UNARY_WITHOUT_ERRORS
#include "tests/kernels/generated/elementwise_cases.inc"
#undef PITH_TEST_UNARY_WITHOUT_ERRORS
        "to.dtype", "clone", "contiguous", "squeeze", "alias", "detach", "nonzero",
        "nonzero_numpy", "isnan", "isinf", "isposinf", "isneginf", "isfinite",
        "sum", "prod"};  // sum() and prod() of every element take every input
    return names;
}

}  // namespace meta_parity
