// Meta parity: every built-in op has a meta function that validates its inputs and computes
// the output's shape and dtype, and the Meta backend runs it alone. Each sample invocation
// (meta_parity_cases.cc) runs twice through pith_call_boxed: once on CPU tensors, once with
// every tensor replaced by a meta tensor of the same sizes, strides and dtype (factories get
// device=meta). Both runs must succeed or fail alike (same status and message); on success
// the meta results have device Meta and the CPU results' ndim, sizes, strides and dtype, and
// in-place and out= forms return their target in both runs. Every built-in op must have
// sample invocations, including at least one that succeeds and, unless the op has no
// input-validation error path, one that fails. Errors that depend on tensor data (an index
// out of range, an integer division by zero) are beyond what a meta function can see, so
// the samples avoid them: integer data is 1..5 and index data is in range.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "meta_parity.h"
#include "pith/pith.h"

namespace {

using namespace meta_parity;

// ---- running one case ----

size_t dtype_size(pith_dtype dtype) { return pith_dtype_size(dtype); }

uint16_t half_from_small_int(int64_t v)  // exact for 0 <= v < 2048
{
    if (v == 0)
        return 0;
    int e = 0;
    while ((int64_t{1} << (e + 1)) <= v)
        e++;
    uint16_t mantissa = (uint16_t)((v - (int64_t{1} << e)) << (10 - e));
    return (uint16_t)(((e + 15) << 10) | mantissa);
}

void store_value(void *p, pith_dtype dtype, int64_t v)
{
    switch (dtype) {
    case PITH_BOOL: *(uint8_t *)p = v != 0; break;
    case PITH_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case PITH_INT8: *(int8_t *)p = (int8_t)v; break;
    case PITH_INT16: *(int16_t *)p = (int16_t)v; break;
    case PITH_INT32: *(int32_t *)p = (int32_t)v; break;
    case PITH_INT64: *(int64_t *)p = v; break;
    case PITH_FLOAT16: *(uint16_t *)p = half_from_small_int(v); break;
    case PITH_BFLOAT16: {
        float f = (float)v;
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        *(uint16_t *)p = (uint16_t)(bits >> 16);
        break;
    }
    case PITH_FLOAT32: *(float *)p = (float)v; break;
    case PITH_FLOAT64: *(double *)p = (double)v; break;
    }
}

Shape contiguous_strides(const Shape &sizes)
{
    Shape strides(sizes.size());
    int64_t s = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
        strides[d] = s;
        s *= sizes[d] > 1 ? sizes[d] : 1;
    }
    return strides;
}

void free_blob(void *data, void *) { std::free(data); }

// A new tensor for a TENSOR argument: data in CPU memory, or a meta tensor.
pith_tensor *tensor_make(const Arg &a, bool meta)
{
    static const int64_t dummy[1] = {0};
    Shape strides = a.strides.empty() ? contiguous_strides(a.sizes) : a.strides;
    const int64_t *sz = a.sizes.empty() ? dummy : a.sizes.data();
    const int64_t *st = strides.empty() ? dummy : strides.data();
    int ndim = (int)a.sizes.size();
    if (meta)
        return pith_empty_strided(ndim, sz, st, a.dtype, PITH_META);
    int64_t extent = 1;  // elements the strides reach
    for (size_t d = 0; d < a.sizes.size(); d++) {
        if (a.sizes[d] == 0)
            extent = 0;
        else if (extent)
            extent += (a.sizes[d] - 1) * strides[d];
    }
    size_t item = dtype_size(a.dtype);
    char *data = (char *)std::malloc(extent * item + 8);
    for (int64_t i = 0; i < extent; i++)
        store_value(data + i * item, a.dtype, a.base + i % a.mod);
    pith_tensor *t = pith_from_blob(data, ndim, sz, st, a.dtype, free_blob, nullptr);
    if (!t)
        std::free(data);
    return t;
}

struct TensorInfo {
    pith_device device;
    int ndim;
    Shape sizes, strides;
    pith_dtype dtype;
    bool is_input;  // the very tensor given as an argument (in-place and out= results)
};
struct ValueInfo {
    pith_value_kind kind;
    std::vector<TensorInfo> tensors;
};
struct Outcome {
    pith_status status = PITH_OK;
    std::string message;
    std::vector<ValueInfo> values;
    std::string setup_error;  // building the arguments failed: a test bug
};

TensorInfo tensor_info(const pith_tensor *t, const std::vector<pith_tensor *> &inputs)
{
    TensorInfo info{};
    int64_t buf[PITH_MAX_DIMS];
    info.device = pith_tensor_device(t);
    info.dtype = pith_tensor_dtype(t);
    info.ndim = pith_sizes(t, buf);
    info.sizes.assign(buf, buf + (info.ndim > 0 ? info.ndim : 0));
    int n = pith_strides(t, buf);
    info.strides.assign(buf, buf + (n > 0 ? n : 0));
    for (const pith_tensor *in : inputs)
        info.is_input = info.is_input || in == t;
    return info;
}

bool push_arg(pith_stack *s, const Arg &a, bool meta, std::vector<pith_tensor *> &owned)
{
    switch (a.kind) {
    case Arg::TENSOR: {
        pith_tensor *t = tensor_make(a, meta);
        if (!t)
            return false;
        owned.push_back(t);
        return pith_stack_push_tensor(s, t) == PITH_OK;
    }
    case Arg::TLIST: {
        std::vector<const pith_tensor *> list;
        for (const Arg &x : a.list) {
            if (x.kind == Arg::NONE) {
                list.push_back(nullptr);
                continue;
            }
            pith_tensor *t = tensor_make(x, meta);
            if (!t)
                return false;
            owned.push_back(t);
            list.push_back(t);
        }
        return pith_stack_push_tensor_list(s, list.data(), list.size()) == PITH_OK;
    }
    case Arg::INT: return pith_stack_push_int(s, a.i) == PITH_OK;
    case Arg::DOUBLE: return pith_stack_push_double(s, a.d) == PITH_OK;
    case Arg::BOOL: return pith_stack_push_bool(s, a.b) == PITH_OK;
    case Arg::NONE: return pith_stack_push_none(s) == PITH_OK;
    case Arg::STR: return pith_stack_push_string(s, a.s.c_str()) == PITH_OK;
    case Arg::ILIST: return pith_stack_push_int_list(s, a.sizes.data(), a.sizes.size()) == PITH_OK;
    case Arg::DTYPE: return pith_stack_push_dtype(s, a.dtype) == PITH_OK;
    case Arg::DEVICE: return pith_stack_push_device(s, meta ? PITH_META : PITH_CPU) == PITH_OK;
    }
    return false;
}

Outcome run_case(const pith_op *op, const Case &c, bool meta)
{
    Outcome out;
    std::vector<pith_tensor *> owned;
    pith_stack *s = pith_stack_new();
    bool built = s != nullptr;
    for (const Arg &a : c.args)
        built = built && push_arg(s, a, meta, owned);
    if (!built) {
        out.setup_error = pith_last_error();
    } else {
        pith_clear_error();
        out.status = pith_call_boxed(op, s);
        out.message = out.status == PITH_OK ? "" : pith_last_error();
        for (size_t i = 0; out.status == PITH_OK && i < pith_stack_size(s); i++) {
            ValueInfo v{pith_stack_kind(s, i), {}};
            if (v.kind == PITH_VALUE_TENSOR) {
                pith_tensor *t = pith_stack_get_tensor(s, i);
                v.tensors.push_back(tensor_info(t, owned));
                pith_release(t);
            } else if (v.kind == PITH_VALUE_TENSOR_LIST) {
                size_t n = 0;
                pith_tensor *const *list = pith_stack_get_tensor_list(s, i, &n);
                for (size_t j = 0; j < n; j++)
                    v.tensors.push_back(tensor_info(list[j], owned));
            }
            out.values.push_back(v);
        }
    }
    pith_stack_free(s);
    for (pith_tensor *t : owned)
        pith_release(t);
    return out;
}

std::string shape_str(const Shape &s)
{
    std::string r = "[";
    for (size_t i = 0; i < s.size(); i++)
        r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

std::string arg_str(const Arg &a)
{
    switch (a.kind) {
    case Arg::TENSOR:
        return std::string(pith_dtype_name(a.dtype)) + shape_str(a.sizes) +
               (a.strides.empty() ? "" : "/strides" + shape_str(a.strides));
    case Arg::TLIST: {
        std::string r = "{";
        for (size_t i = 0; i < a.list.size(); i++)
            r += (i ? ", " : "") + arg_str(a.list[i]);
        return r + "}";
    }
    case Arg::INT: return std::to_string(a.i);
    case Arg::DOUBLE: return std::to_string(a.d);
    case Arg::BOOL: return a.b ? "True" : "False";
    case Arg::NONE: return "None";
    case Arg::STR: return "'" + a.s + "'";
    case Arg::ILIST: return shape_str(a.sizes);
    case Arg::DTYPE: return pith_dtype_name(a.dtype);
    case Arg::DEVICE: return "<device>";
    }
    return "?";
}

std::string case_str(const Case &c)
{
    std::string r = c.op + "(";
    for (size_t i = 0; i < c.args.size(); i++)
        r += (i ? ", " : "") + arg_str(c.args[i]);
    return r + ")";
}

std::vector<std::string> table_op_names()
{
    std::vector<std::string> names;
    std::set<std::string> seen;
    for (const Case &c : all_cases())
        if (seen.insert(c.op).second)
            names.push_back(c.op);
    return names;
}

// ---- the tests ----

class MetaParityTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override { live_ = pith_live_tensors(); }
    void TearDown() override { EXPECT_EQ(pith_live_tensors(), live_); }
    size_t live_ = 0;
};

class MetaParity : public ::testing::Test {
protected:
    void SetUp() override { live_ = pith_live_tensors(); }
    void TearDown() override { EXPECT_EQ(pith_live_tensors(), live_); }
    size_t live_ = 0;
};

TEST_F(MetaParity, EveryBuiltinOpHasSampleInvocations)
{
    std::set<std::string> covered;
    for (const Case &c : all_cases())
        covered.insert(c.op);
    size_t builtin = 0;
    for (size_t i = 0; i < pith_op_count(); i++) {
        std::string name = pith_op_name(pith_op_at(i));
        if (name.rfind("pith::", 0) != 0)
            continue;
        builtin++;
        EXPECT_TRUE(covered.count(name.substr(6)))
            << name << " has no sample invocation in the meta parity table";
    }
    EXPECT_GT(builtin, 100u);
}

TEST_F(MetaParity, EveryTableEntryNamesABuiltinOp)
{
    for (const std::string &name : table_op_names()) {
        const pith_op *op = pith_op_find(("pith::" + name).c_str());
        ASSERT_NE(op, nullptr) << name;
        EXPECT_EQ(pith_op_name(op), "pith::" + name);
    }
    pith_clear_error();
}

TEST_P(MetaParityTest, MetaMatchesCpu)
{
    const std::string &name = GetParam();
    const pith_op *op = pith_op_find(("pith::" + name).c_str());
    ASSERT_NE(op, nullptr) << name;
    const std::string schema = pith_op_schema(op);
    const bool writes = schema.find("(a!)") != std::string::npos;
    int successes = 0, failures = 0;
    for (const Case &c : all_cases()) {
        if (c.op != name)
            continue;
        SCOPED_TRACE(case_str(c));
        Outcome cpu = run_case(op, c, false);
        Outcome meta = run_case(op, c, true);
        ASSERT_EQ(cpu.setup_error, "") << "building the CPU arguments failed";
        ASSERT_EQ(meta.setup_error, "") << "building the meta arguments failed";
        (cpu.status == PITH_OK ? successes : failures)++;
        if (c.expect == DATA) {
            EXPECT_EQ(cpu.status, PITH_OK) << "CPU run failed: " << cpu.message;
            EXPECT_EQ(pith_status_name(meta.status), std::string("PITH_ERR_NOT_IMPLEMENTED"))
                << "Meta: " << meta.message;
            EXPECT_NE(meta.message.find("not supported on the meta device"), std::string::npos)
                << meta.message;
            continue;
        }
        if (c.expect == OK) {
            EXPECT_EQ(cpu.status, PITH_OK) << "CPU run failed: " << cpu.message;
        } else if (c.expect == ERR) {
            EXPECT_NE(cpu.status, PITH_OK) << "CPU run accepted an invalid call";
        }
        EXPECT_EQ(pith_status_name(meta.status), std::string(pith_status_name(cpu.status)))
            << "CPU: " << cpu.message << "\nMeta: " << meta.message;
        if (cpu.status != PITH_OK || meta.status != PITH_OK) {
            EXPECT_EQ(meta.message, cpu.message);
            continue;
        }
        ASSERT_EQ(meta.values.size(), cpu.values.size());
        for (size_t i = 0; i < cpu.values.size(); i++) {
            const ValueInfo &cv = cpu.values[i], &mv = meta.values[i];
            ASSERT_EQ(mv.kind, cv.kind) << "result " << i;
            ASSERT_EQ(mv.tensors.size(), cv.tensors.size()) << "result " << i;
            for (size_t j = 0; j < cv.tensors.size(); j++) {
                const TensorInfo &ct = cv.tensors[j], &mt = mv.tensors[j];
                SCOPED_TRACE("result " + std::to_string(i) + "." + std::to_string(j));
                EXPECT_EQ(ct.device, PITH_CPU);
                EXPECT_EQ(mt.device, PITH_META);
                EXPECT_EQ(mt.ndim, ct.ndim);
                EXPECT_EQ(shape_str(mt.sizes), shape_str(ct.sizes)) << "sizes";
                EXPECT_EQ(pith_dtype_name(mt.dtype), std::string(pith_dtype_name(ct.dtype)));
                // Strides too: views must alias alike, and the compiler's memory planner
                // lays buffers out from the meta results.
                EXPECT_EQ(shape_str(mt.strides), shape_str(ct.strides)) << "strides";
                if (writes) {
                    EXPECT_TRUE(ct.is_input) << "the CPU run must return its target";
                    EXPECT_TRUE(mt.is_input) << "the meta run must return its target";
                }
            }
        }
    }
    pith_clear_error();
    EXPECT_GT(successes, 0) << name << ": no sample invocation succeeds";
    if (!ops_without_error_path().count(name))
        EXPECT_GT(failures, 0) << name << ": no sample invocation exercises validation";
    else
        EXPECT_EQ(failures, 0) << name << " is listed as having no error path";
}

std::string param_name(const ::testing::TestParamInfo<std::string> &info)
{
    std::string r = info.param;
    for (char &ch : r)
        if (!isalnum((unsigned char)ch))
            ch = '_';
    return r;
}

INSTANTIATE_TEST_SUITE_P(Ops, MetaParityTest, ::testing::ValuesIn(table_op_names()), param_name);

}  // namespace
