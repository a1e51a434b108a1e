// elementwise_ops_test.cc — every unary and binary op of pith/ops.h, for every dtype, on
// contiguous, transposed, stepped, broadcast, 0-dim and empty inputs, in its functional,
// out= and in-place forms, against references computed here in double (integer results
// wrapped to their width here too).
#include <functional>
#include <map>

#include "elementwise_util.h"

namespace {

// ---- references ----

// The result dtype of an op for inputs promoting to `d`, or -1 when the op rejects it.
using ResultRule = std::function<int(pith_dtype)>;
// The value for one element; `d` is the result dtype (for wrapping integers).
using UnaryValue = std::function<double(double, pith_dtype)>;
using BinaryValue = std::function<double(double, double, pith_dtype)>;

int same(pith_dtype d) { return d; }
int to_float(pith_dtype d) { return is_float(d) ? d : PITH_FLOAT32; }
int to_bool(pith_dtype) { return PITH_BOOL; }
int no_bool(pith_dtype d) { return d == PITH_BOOL ? -1 : d; }
int float_only(pith_dtype d) { return is_float(d) ? d : -1; }
int no_float(pith_dtype d) { return is_float(d) ? -1 : d; }

int64_t as_int(double v) { return (int64_t)v; }
double wrapped(pith_dtype d, uint64_t v) { return (double)wrap_to(d, v); }

int64_t python_floor_divide(int64_t a, int64_t b)
{
    int64_t q = a / b, r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? q - 1 : q;
}
int64_t python_remainder(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}
uint64_t int_power(int64_t a, int64_t b)
{
    if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 ? (uint64_t)-1 : 1) : 0;
    uint64_t r = 1;
    for (int64_t i = 0; i < b; i++) r *= (uint64_t)a;
    return r;
}

struct UnaryCase {
    const char *name;
    pith_tensor *(*fn)(const pith_tensor *);
    pith_status (*out_fn)(pith_tensor *, const pith_tensor *);
    pith_status (*inplace_fn)(pith_tensor *);
};
struct BinaryCase {
    const char *name;
    pith_tensor *(*fn)(const pith_tensor *, const pith_tensor *);
    pith_status (*out_fn)(pith_tensor *, const pith_tensor *, const pith_tensor *);
    pith_status (*inplace_fn)(pith_tensor *, const pith_tensor *);
};

#define UNARY_CASE(n) {#n, pith_##n, pith_##n##_out, pith_##n##_},
#define BINARY_CASE(n) {#n, pith_##n, pith_##n##_out, pith_##n##_},
const UnaryCase kUnary[] = {PITH_FORALL_UNARY_OPS(UNARY_CASE)};
const BinaryCase kBinary[] = {PITH_FORALL_BINARY_OPS(BINARY_CASE)};

struct UnaryRef {
    ResultRule rule;
    UnaryValue value;
};
struct BinaryRef {
    ResultRule rule;
    BinaryValue value;
};


const std::map<std::string, UnaryRef> &unary_refs()
{
    static const std::map<std::string, UnaryRef> refs = {
        {"neg", {no_bool, [](double x, pith_dtype d) { return is_float(d) ? -x : wrapped(d, 0 - (uint64_t)as_int(x)); }}},
        {"abs", {no_bool, [](double x, pith_dtype d) { return is_float(d) ? std::fabs(x) : wrapped(d, x < 0 ? 0 - (uint64_t)as_int(x) : (uint64_t)as_int(x)); }}},
        {"sign", {same, [](double x, pith_dtype) { return (double)((0 < x) - (x < 0)); }}},
        {"exp", {to_float, [](double x, pith_dtype) { return std::exp(x); }}},
        {"log", {to_float, [](double x, pith_dtype) { return std::log(x); }}},
        {"log1p", {to_float, [](double x, pith_dtype) { return std::log1p(x); }}},
        {"expm1", {to_float, [](double x, pith_dtype) { return std::expm1(x); }}},
        {"sqrt", {to_float, [](double x, pith_dtype) { return std::sqrt(x); }}},
        {"rsqrt", {to_float, [](double x, pith_dtype) { return 1 / std::sqrt(x); }}},
        {"sin", {to_float, [](double x, pith_dtype) { return std::sin(x); }}},
        {"cos", {to_float, [](double x, pith_dtype) { return std::cos(x); }}},
        {"tanh", {to_float, [](double x, pith_dtype) { return std::tanh(x); }}},
        {"sigmoid", {to_float, [](double x, pith_dtype) { return 1 / (1 + std::exp(-x)); }}},
        {"relu", {no_bool, [](double x, pith_dtype) { return std::isnan(x) ? x : x > 0 ? x : 0; }}},
        {"silu", {float_only, [](double x, pith_dtype) { return x / (1 + std::exp(-x)); }}},
        {"erf", {to_float, [](double x, pith_dtype) { return std::erf(x); }}},
        {"logical_not", {to_bool, [](double x, pith_dtype) { return x == 0 ? 1.0 : 0.0; }}},
        {"bitwise_not", {no_float, [](double x, pith_dtype d) { return d == PITH_BOOL ? (x == 0) : wrapped(d, ~(uint64_t)as_int(x)); }}},
    };
    return refs;
}

double float_floor_divide(double a, double b)
{
    if (b == 0) return a / b;
    return std::floor(a / b);
}
double float_remainder(double a, double b)
{
    double m = std::fmod(a, b);
    return (m != 0 && (m < 0) != (b < 0)) ? m + b : m;
}
double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

const std::map<std::string, BinaryRef> &binary_refs()
{
    static const std::map<std::string, BinaryRef> refs = {
        {"add", {same, [](double a, double b, pith_dtype d) {
             return d == PITH_BOOL ? (a || b) : is_float(d) ? a + b : wrapped(d, (uint64_t)as_int(a) + (uint64_t)as_int(b)); }}},
        {"sub", {no_bool, [](double a, double b, pith_dtype d) {
             return is_float(d) ? a - b : wrapped(d, (uint64_t)as_int(a) - (uint64_t)as_int(b)); }}},
        {"mul", {same, [](double a, double b, pith_dtype d) {
             return d == PITH_BOOL ? (a && b) : is_float(d) ? a * b : wrapped(d, (uint64_t)as_int(a) * (uint64_t)as_int(b)); }}},
        {"div", {to_float, [](double a, double b, pith_dtype) { return a / b; }}},
        {"floor_divide", {no_bool, [](double a, double b, pith_dtype d) {
             return is_float(d) ? float_floor_divide(a, b) : wrapped(d, (uint64_t)python_floor_divide(as_int(a), as_int(b))); }}},
        {"remainder", {no_bool, [](double a, double b, pith_dtype d) {
             return is_float(d) ? float_remainder(a, b) : wrapped(d, (uint64_t)python_remainder(as_int(a), as_int(b))); }}},
        {"pow", {no_bool, [](double a, double b, pith_dtype d) {
             return is_float(d) ? std::pow(a, b) : wrapped(d, int_power(as_int(a), as_int(b))); }}},
        {"maximum", {same, [](double a, double b, pith_dtype) { return nan_max(a, b); }}},
        {"minimum", {same, [](double a, double b, pith_dtype) { return nan_min(a, b); }}},
        {"eq", {to_bool, [](double a, double b, pith_dtype) { return (double)(a == b); }}},
        {"ne", {to_bool, [](double a, double b, pith_dtype) { return (double)(a != b); }}},
        {"lt", {to_bool, [](double a, double b, pith_dtype) { return (double)(a < b); }}},
        {"le", {to_bool, [](double a, double b, pith_dtype) { return (double)(a <= b); }}},
        {"gt", {to_bool, [](double a, double b, pith_dtype) { return (double)(a > b); }}},
        {"ge", {to_bool, [](double a, double b, pith_dtype) { return (double)(a >= b); }}},
        {"logical_and", {to_bool, [](double a, double b, pith_dtype) { return (double)(a != 0 && b != 0); }}},
        {"logical_or", {to_bool, [](double a, double b, pith_dtype) { return (double)(a != 0 || b != 0); }}},
        {"bitwise_and", {no_float, [](double a, double b, pith_dtype d) { return wrapped(d, (uint64_t)as_int(a) & (uint64_t)as_int(b)); }}},
        {"bitwise_or", {no_float, [](double a, double b, pith_dtype d) { return wrapped(d, (uint64_t)as_int(a) | (uint64_t)as_int(b)); }}},
        {"bitwise_xor", {no_float, [](double a, double b, pith_dtype d) { return wrapped(d, (uint64_t)as_int(a) ^ (uint64_t)as_int(b)); }}},
    };
    return refs;
}

// ---- inputs ----

std::vector<double> input_a(pith_dtype d)
{
    switch (d) {
    case PITH_BOOL: return {1, 0, 1, 0, 1, 1, 0, 0};
    case PITH_UINT8: return {0, 1, 2, 3, 100, 200, 255, 7};
    case PITH_INT8: case PITH_INT16: case PITH_INT32: case PITH_INT64: return {-7, 7, -7, 0, 100, -100, 5, 1};
    default: return {-7, 7, -2.5, 0, 1.5, -0.0, 3, NAN};
    }
}
// No zero for integers (integer division by zero is an error, tested on its own).
std::vector<double> input_b(pith_dtype d)
{
    switch (d) {
    case PITH_BOOL: return {1, 1, 0, 0, 1, 0, 1, 0};
    case PITH_UINT8: return {1, 2, 3, 4, 5, 7, 255, 9};
    case PITH_INT8: case PITH_INT16: case PITH_INT32: case PITH_INT64: return {2, 2, -2, 3, -3, 7, 1, -1};
    default: return {2, -2, 0.5, 3, 0, 1, -1, 2};
    }
}

// One input layout: the tensor and its values in row-major logical order.
struct Input {
    Tensor t;
    std::vector<double> values;
    const char *layout;
};

// The layouts of an 8-value input: contiguous [8], transposed [4, 2], every third element,
// a stride-0 broadcast [2, 8], 0-dim, and empty [0, 3].
std::vector<Input> unary_layouts(pith_dtype d, const std::vector<double> &v)
{
    std::vector<Input> out;
    out.push_back({make({8}, d, v), v, "contiguous"});
    // A [4, 2] view with strides (1, 4): element (i, j) is stored at j * 4 + i.
    std::vector<double> tv = {v[0], v[4], v[1], v[5], v[2], v[6], v[3], v[7]};
    out.push_back({make_strided({4, 2}, {1, 4}, d, tv), tv, "transposed"});
    out.push_back({make_strided({8}, {3}, d, v), v, "stepped"});
    std::vector<double> bv(v);
    bv.insert(bv.end(), v.begin(), v.end());
    out.push_back({make_strided({2, 8}, {0, 1}, d, bv), bv, "broadcast"});
    out.push_back({make({}, d, {v[2]}), {v[2]}, "0-dim"});
    out.push_back({make({0, 3}, d, {}), {}, "empty"});
    return out;
}

bool layout_writable(const Input &in) { return std::string(in.layout) != "broadcast"; }

std::string where_str(const char *op, pith_dtype d, const char *layout)
{
    return std::string(op) + " " + pith_dtype_name(d) + " " + layout;
}

using ElementwiseOpsTest = ElementwiseTest;

TEST_F(ElementwiseOpsTest, EveryUnaryOpHasAReference)
{
    for (const UnaryCase &c : kUnary) EXPECT_EQ(unary_refs().count(c.name), 1u) << c.name;
    for (const BinaryCase &c : kBinary) EXPECT_EQ(binary_refs().count(c.name), 1u) << c.name;
}

void check_unary(const UnaryCase &c, pith_dtype d)
{
    const UnaryRef &ref = unary_refs().at(c.name);
    int rule = ref.rule(d);
    for (Input &in : unary_layouts(d, input_a(d))) {
        std::string where = where_str(c.name, d, in.layout);
        pith_clear_error();
        Tensor out(c.fn(in.t.get()));
        if (rule < 0) {
            EXPECT_EQ(out, nullptr) << where;
            EXPECT_EQ(pith_last_status(), PITH_ERR_TYPE) << where;
            EXPECT_NE(std::string(pith_last_error()).find(c.name), std::string::npos) << pith_last_error();
            continue;
        }
        pith_dtype rd = (pith_dtype)rule;
        ASSERT_NE(out, nullptr) << where << ": " << pith_last_error();
        EXPECT_EQ(pith_tensor_dtype(out.get()), rd) << where;
        EXPECT_EQ(sizes_of(out.get()), sizes_of(in.t.get())) << where;
        EXPECT_TRUE(pith_is_contiguous(out.get())) << where;
        std::vector<double> want;
        for (double x : in.values) want.push_back(test_round(rd, ref.value(x, rd)));
        SCOPED_TRACE(where);
        EXPECT_VALUES(rd, out.get(), want);

        // out=: an empty out of the result dtype is resized.
        Tensor dst = make({0}, rd, {});
        ASSERT_EQ(c.out_fn(dst.get(), in.t.get()), PITH_OK) << where << ": " << pith_last_error();
        EXPECT_EQ(sizes_of(dst.get()), sizes_of(in.t.get()));
        EXPECT_VALUES(rd, dst.get(), want);

        // In place, where self can hold the result.
        if (rd == d && layout_writable(in)) {
            int64_t before = pith_version_counter(in.t.get());
            ASSERT_EQ(c.inplace_fn(in.t.get()), PITH_OK) << where << ": " << pith_last_error();
            EXPECT_VALUES(rd, in.t.get(), want);
            EXPECT_EQ(pith_version_counter(in.t.get()), before + 1);
        }
    }
}

TEST_F(ElementwiseOpsTest, UnaryOpsMatchTheReferenceForEveryDtypeAndLayout)
{
    for (const UnaryCase &c : kUnary)
        for (pith_dtype d : kAllDtypes) check_unary(c, d);
}

TEST_F(ElementwiseOpsTest, InPlaceUnaryWhoseResultSelfCannotHoldIsATypeError)
{
    Tensor x = make({3}, PITH_INT32, {1, 2, 3});
    int64_t before = pith_version_counter(x.get());
    EXPECT_ERROR(pith_exp_(x.get()), PITH_ERR_TYPE, "result type float32 can't be cast to the desired output type int32");
    EXPECT_EQ(pith_version_counter(x.get()), before);
    EXPECT_VALUES(PITH_INT32, x.get(), (std::vector<double>{1, 2, 3}));
}

// ---- binary ----

struct BinaryInputs {
    Tensor a, b;
    std::vector<double> av, bv; // broadcast to the result shape, row-major
    std::vector<int64_t> shape;
    const char *layout;
};

std::vector<BinaryInputs> binary_layouts(pith_dtype d)
{
    std::vector<double> a = input_a(d), b = input_b(d);
    std::vector<BinaryInputs> out;
    out.push_back({make({8}, d, a), make({8}, d, b), a, b, {8}, "contiguous"});
    {
        std::vector<double> ta = {a[0], a[4], a[1], a[5], a[2], a[6], a[3], a[7]};
        std::vector<double> tb = {b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]};
        out.push_back({make_strided({4, 2}, {1, 4}, d, ta), make({4, 2}, d, tb), ta, tb, {4, 2}, "transposed self"});
    }
    out.push_back({make({8}, d, a), make({}, d, {b[1]}), a, std::vector<double>(8, b[1]), {8}, "0-dim other"});
    out.push_back({make({}, d, {a[1]}), make({8}, d, b), std::vector<double>(8, a[1]), b, {8}, "0-dim self"});
    {
        std::vector<double> bb;
        for (int i = 0; i < 2; i++) bb.insert(bb.end(), b.begin(), b.begin() + 4);
        out.push_back({make({2, 4}, d, a), make({4}, d, {b[0], b[1], b[2], b[3]}), a, bb, {2, 4}, "broadcast other"});
    }
    {
        std::vector<double> aa;
        for (int i = 0; i < 2; i++) aa.insert(aa.end(), a.begin(), a.begin() + 4);
        out.push_back({make_strided({2, 4}, {0, 1}, d, aa), make({2, 4}, d, b), aa, b, {2, 4}, "expanded self"});
    }
    out.push_back({make_strided({8}, {3}, d, a), make_strided({8}, {2}, d, b), a, b, {8}, "stepped"});
    out.push_back({make({}, d, {a[4]}), make({}, d, {b[4]}), {a[4]}, {b[4]}, {}, "both 0-dim"});
    out.push_back({make({0, 4}, d, {}), make({4}, d, {b[0], b[1], b[2], b[3]}), {}, {}, {0, 4}, "empty"});
    return out;
}

void check_binary(const BinaryCase &c, pith_dtype d)
{
    const BinaryRef &ref = binary_refs().at(c.name);
    int rule = ref.rule(d);
    for (BinaryInputs &in : binary_layouts(d)) {
        std::string where = where_str(c.name, d, in.layout);
        pith_clear_error();
        Tensor out(c.fn(in.a.get(), in.b.get()));
        if (rule < 0) {
            EXPECT_EQ(out, nullptr) << where;
            EXPECT_EQ(pith_last_status(), PITH_ERR_TYPE) << where;
            EXPECT_NE(std::string(pith_last_error()).find(c.name), std::string::npos) << pith_last_error();
            continue;
        }
        pith_dtype rd = (pith_dtype)rule;
        ASSERT_NE(out, nullptr) << where << ": " << pith_last_error();
        EXPECT_EQ(pith_tensor_dtype(out.get()), rd) << where;
        EXPECT_EQ(sizes_of(out.get()), in.shape) << where;
        std::vector<double> want;
        for (size_t i = 0; i < in.av.size(); i++) want.push_back(test_round(rd, ref.value(in.av[i], in.bv[i], rd)));
        SCOPED_TRACE(where);
        EXPECT_VALUES(rd, out.get(), want);

        Tensor dst = make(in.shape, rd, std::vector<double>(want.size(), 0));
        int64_t before = pith_version_counter(dst.get());
        ASSERT_EQ(c.out_fn(dst.get(), in.a.get(), in.b.get()), PITH_OK) << where << ": " << pith_last_error();
        EXPECT_VALUES(rd, dst.get(), want);
        EXPECT_EQ(pith_version_counter(dst.get()), before + 1);

        bool self_is_result_shape = sizes_of(in.a.get()) == in.shape;
        if (rd == d && self_is_result_shape && std::string(in.layout) != "expanded self") {
            ASSERT_EQ(c.inplace_fn(in.a.get(), in.b.get()), PITH_OK) << where << ": " << pith_last_error();
            EXPECT_VALUES(rd, in.a.get(), want);
        }
    }
}

TEST_F(ElementwiseOpsTest, BinaryOpsMatchTheReferenceForEveryDtypeAndLayout)
{
    for (const BinaryCase &c : kBinary)
        for (pith_dtype d : kAllDtypes) check_binary(c, d);
}

// Mixed dtypes: the inputs are converted to the promoted dtype before the op.
TEST_F(ElementwiseOpsTest, MixedDtypeOperandsComputeInThePromotedDtype)
{
    const std::vector<double> av = {0, 1, 2, 3, 5, 8, 13, 21}, bv = {1, 1, 0, 2, 3, 1, 5, 0};
    const char *names[] = {"add", "mul", "maximum", "eq", "lt", "div", "logical_and", "bitwise_or"};
    for (const char *name : names) {
        const BinaryCase *c = nullptr;
        for (const BinaryCase &k : kBinary)
            if (std::string(k.name) == name) c = &k;
        ASSERT_NE(c, nullptr);
        const BinaryRef &ref = binary_refs().at(name);
        for (pith_dtype da : kAllDtypes)
            for (pith_dtype db : kAllDtypes) {
                std::vector<double> a = av, b = bv;
                if (da == PITH_BOOL) for (double &x : a) x = x != 0;
                if (db == PITH_BOOL) for (double &x : b) x = x != 0;
                Tensor ta = make({8}, da, a), tb = make({8}, db, b);
                pith_dtype common = pith_promote_types(da, db);
                int rule = ref.rule(common);
                std::string where = std::string(name) + " " + pith_dtype_name(da) + " " + pith_dtype_name(db);
                pith_clear_error();
                Tensor out(c->fn(ta.get(), tb.get()));
                if (rule < 0) {
                    EXPECT_EQ(out, nullptr) << where;
                    continue;
                }
                ASSERT_NE(out, nullptr) << where << ": " << pith_last_error();
                EXPECT_EQ(pith_tensor_dtype(out.get()), (pith_dtype)rule) << where;
                std::vector<double> want;
                for (size_t i = 0; i < 8; i++) want.push_back(test_round((pith_dtype)rule, ref.value(a[i], b[i], (pith_dtype)rule)));
                SCOPED_TRACE(where);
                EXPECT_VALUES((pith_dtype)rule, out.get(), want);
            }
    }
}

} // namespace
