// The out= forms of matmul, mm, bmm, cat and stack (matmul.out, mm.out, bmm.out, cat.out,
// stack.out): values against the functional ops, the out tensor itself as the result, the
// dtype rules (exact for the products, castable for cat and stack), resizing of empty outs
// only, 0-size inputs, non-contiguous outs, outs that overlap an input, and the Meta
// kernels through the boxed call.
#include <cstdint>
#include <functional>

#include "views_test_util.h"

namespace pith_e_test {
namespace {

class OutOpsTest : public KernelFixture {};

using Values_ = std::vector<double>;

// Small integers, exact in every dtype: element i is (i * 7 + seed) % 5 - 2 (bool: != 0).
Tensor Numbers(const Shape &sizes, pith_dtype dtype, int seed = 0)
{
    int64_t n = 1;
    for (int64_t s : sizes)
        n *= s;
    Values_ v((size_t)n);
    for (int64_t i = 0; i < n; i++)
        v[(size_t)i] = (double)((i * 7 + seed) % 5 - 2);
    Tensor f = FromValues(sizes, PITH_FLOAT64, v);
    return Tensor(pith_to_dtype(f.get(), dtype));
}

Tensor Full(const Shape &sizes, double value, pith_dtype dtype = PITH_FLOAT32)
{
    return Tensor(pith_full((int)sizes.size(), sizes.data(), value, dtype));
}

Tensor Empty0(pith_dtype dtype = PITH_FLOAT32)
{
    const int64_t zero[1] = {0};
    return Tensor(pith_empty(1, zero, dtype));
}

Tensor Meta(const Shape &sizes, pith_dtype dtype = PITH_FLOAT32)
{
    return Tensor(pith_empty_strided((int)sizes.size(), sizes.data(), nullptr, dtype, PITH_META));
}

Tensor Slice(const pith_tensor *t, int dim, int64_t start, int64_t end)
{
    Tensor s(pith_slice(t, dim, start, end, 1));
    EXPECT_NE(s, nullptr) << pith_last_error();
    return s;
}

// An [rows, cols] tensor whose strides are (1, rows): the transpose of a contiguous one.
Tensor TransposedOut(int64_t rows, int64_t cols, pith_dtype dtype = PITH_FLOAT32)
{
    Tensor base = Full({cols, rows}, -9, dtype);
    return Tensor(pith_t(base.get()));
}

// A boxed call of a (Tensor, Tensor, *, Tensor out) op; the result tensor, or NULL.
Tensor BoxedProduct(const char *name, const pith_tensor *a, const pith_tensor *b,
                    const pith_tensor *out)
{
    const pith_op *op = pith_op_find(name);
    EXPECT_NE(op, nullptr) << name;
    pith_stack *s = pith_stack_new();
    pith_stack_push_tensor(s, a);
    pith_stack_push_tensor(s, b);
    pith_stack_push_tensor(s, out);
    Tensor r;
    if (pith_call_boxed(op, s) == PITH_OK) {
        EXPECT_EQ(pith_stack_size(s), 1u);
        r.reset(pith_stack_get_tensor(s, 0));
    }
    pith_stack_free(s);
    return r;
}

// A boxed call of a (Tensor[], int dim, *, Tensor out) op; the result tensor, or NULL.
Tensor BoxedCombine(const char *name, const std::vector<const pith_tensor *> &tensors,
                    int64_t dim, const pith_tensor *out)
{
    const pith_op *op = pith_op_find(name);
    EXPECT_NE(op, nullptr) << name;
    pith_stack *s = pith_stack_new();
    pith_stack_push_tensor_list(s, tensors.data(), tensors.size());
    pith_stack_push_int(s, dim);
    pith_stack_push_tensor(s, out);
    Tensor r;
    if (pith_call_boxed(op, s) == PITH_OK) {
        EXPECT_EQ(pith_stack_size(s), 1u);
        r.reset(pith_stack_get_tensor(s, 0));
    }
    pith_stack_free(s);
    return r;
}

// ---- matmul.out, mm.out, bmm.out ----

using ProductFn = pith_tensor *(*)(const pith_tensor *, const pith_tensor *);
using ProductOutFn = pith_status (*)(pith_tensor *, const pith_tensor *, const pith_tensor *);

struct Product {
    const char *op;  // the out= overload
    ProductFn fn;
    ProductOutFn out_fn;
    Shape a, b;
};

const std::vector<Product> &Products()
{
    static const std::vector<Product> products = {
        {"mm.out", pith_mm, pith_mm_out, {2, 3}, {3, 4}},
        {"bmm.out", pith_bmm, pith_bmm_out, {2, 2, 3}, {2, 3, 4}},
        {"matmul.out", pith_matmul, pith_matmul_out, {2, 3}, {3, 4}},
        {"matmul.out", pith_matmul, pith_matmul_out, {3}, {3}},
        {"matmul.out", pith_matmul, pith_matmul_out, {3}, {3, 2}},
        {"matmul.out", pith_matmul, pith_matmul_out, {2, 1, 2, 3}, {5, 3, 4}},
        {"matmul.out", pith_matmul, pith_matmul_out, {2, 2, 3}, {3}},
    };
    return products;
}

std::string Describe(const Product &p, pith_dtype dtype)
{
    auto str = [](const Shape &s) {
        std::string r = "[";
        for (size_t i = 0; i < s.size(); i++)
            r += (i ? ", " : "") + std::to_string(s[i]);
        return r + "]";
    };
    return std::string(p.op) + " " + str(p.a) + " x " + str(p.b) + " " + pith_dtype_name(dtype);
}

TEST_F(OutOpsTest, ProductOutMatchesTheFunctionalOpForEveryDtype)
{
    for (const Product &p : Products()) {
        for (pith_dtype dtype : {PITH_FLOAT32, PITH_FLOAT64, PITH_INT64, PITH_INT32,
                                 PITH_FLOAT16, PITH_BFLOAT16, PITH_BOOL}) {
            SCOPED_TRACE(Describe(p, dtype));
            Tensor a = Numbers(p.a, dtype, 1), b = Numbers(p.b, dtype, 3);
            Tensor want(p.fn(a.get(), b.get()));
            ASSERT_NE(want, nullptr) << pith_last_error();
            Tensor out = Empty0(dtype);
            ASSERT_EQ(p.out_fn(out.get(), a.get(), b.get()), PITH_OK) << pith_last_error();
            EXPECT_EQ(Sizes(out.get()), Sizes(want.get()));
            EXPECT_EQ(Strides(out.get()), Strides(want.get()));
            EXPECT_EQ(Values(out.get()), Values(want.get()));
            EXPECT_EQ(pith_tensor_dtype(out.get()), dtype);
        }
    }
}

TEST_F(OutOpsTest, ProductOutReturnsTheOutTensorAndWritesItsOwnMemory)
{
    for (const Product &p : Products()) {
        SCOPED_TRACE(Describe(p, PITH_FLOAT32));
        Tensor a = Numbers(p.a, PITH_FLOAT32), b = Numbers(p.b, PITH_FLOAT32, 2);
        Tensor want(p.fn(a.get(), b.get()));
        ASSERT_NE(want, nullptr) << pith_last_error();
        Shape shape = Sizes(want.get());
        Tensor out = Full(shape, 99);
        void *data = pith_data_ptr(out.get());
        int64_t version = pith_version_counter(out.get());
        Tensor r = BoxedProduct(p.op, a.get(), b.get(), out.get());
        ASSERT_NE(r, nullptr) << pith_last_error();
        EXPECT_EQ(r.get(), out.get());
        EXPECT_EQ(pith_data_ptr(out.get()), data);
        EXPECT_GT(pith_version_counter(out.get()), version);
        EXPECT_EQ(Values(out.get()), Values(want.get()));
    }
}

TEST_F(OutOpsTest, ProductOutOfAnotherDtypeIsATypeError)
{
    for (const Product &p : Products()) {
        SCOPED_TRACE(Describe(p, PITH_FLOAT32));
        Tensor a = Numbers(p.a, PITH_FLOAT32), b = Numbers(p.b, PITH_FLOAT32);
        Tensor out = Empty0(PITH_FLOAT64);
        EXPECT_EQ(p.out_fn(out.get(), a.get(), b.get()), PITH_ERR_TYPE);
        EXPECT_TRUE(HasError(PITH_ERR_TYPE, "Expected out tensor to have dtype float32, but "
                                            "got float64 instead"));
        EXPECT_EQ(Sizes(out.get()), (Shape{0}));  // untouched
        Tensor ints = Empty0(PITH_INT64);
        EXPECT_EQ(p.out_fn(ints.get(), a.get(), b.get()), PITH_ERR_TYPE);
        EXPECT_TRUE(HasError(PITH_ERR_TYPE, "but got int64 instead"));
    }
    // Even where a cast would be safe (int32 into int64), as PyTorch.
    Tensor a = Numbers({2, 2}, PITH_INT32), out = Empty0(PITH_INT64);
    EXPECT_EQ(pith_mm_out(out.get(), a.get(), a.get()), PITH_ERR_TYPE);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "mm: Expected out tensor to have dtype int32"));
}

TEST_F(OutOpsTest, ProductInputErrorsComeBeforeOutChecks)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({3, 4}, PITH_FLOAT64);
    Tensor out = Empty0(PITH_INT64);
    EXPECT_EQ(pith_mm_out(out.get(), a.get(), b.get()), PITH_ERR_TYPE);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "expected m1 and m2 to have the same dtype"));
    Tensor c = Numbers({4, 4}, PITH_FLOAT32);
    EXPECT_EQ(pith_matmul_out(out.get(), a.get(), c.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "shapes cannot be multiplied (2x3 and 4x4)"));
    EXPECT_EQ(pith_bmm_out(out.get(), a.get(), c.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "batch1 must be a 3D tensor"));
}

TEST_F(OutOpsTest, ProductOutOfAnotherNonEmptyShapeIsAnErrorAndUntouched)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({3, 4}, PITH_FLOAT32);
    for (const Shape &shape : {Shape{3, 3}, Shape{8}, Shape{4, 2}, Shape{1, 2, 4}}) {
        Tensor out = Full(shape, 5);
        EXPECT_EQ(pith_mm_out(out.get(), a.get(), b.get()), PITH_ERR_VALUE);
        EXPECT_TRUE(HasError(PITH_ERR_VALUE, "only an empty out= tensor is resized"));
        EXPECT_EQ(Sizes(out.get()), shape);
        EXPECT_EQ(Values(out.get()), Values_(Values(out.get()).size(), 5));
        EXPECT_EQ(pith_matmul_out(out.get(), a.get(), b.get()), PITH_ERR_VALUE);
        EXPECT_TRUE(HasError(PITH_ERR_VALUE, "matmul: out= tensor has shape"));
    }
    Tensor ba = Numbers({2, 2, 3}, PITH_FLOAT32), bb = Numbers({2, 3, 4}, PITH_FLOAT32);
    Tensor out = Full({2, 4}, 5);
    EXPECT_EQ(pith_bmm_out(out.get(), ba.get(), bb.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "result has shape [2, 2, 4]"));
}

TEST_F(OutOpsTest, EmptyProductOutOfAnyShapeIsResizedContiguous)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({3, 4}, PITH_FLOAT32);
    Tensor want(pith_mm(a.get(), b.get()));
    for (const Shape &shape : {Shape{0}, Shape{0, 5}, Shape{3, 0, 2}}) {
        Tensor out = Full(shape, 0);
        ASSERT_EQ(pith_mm_out(out.get(), a.get(), b.get()), PITH_OK) << pith_last_error();
        EXPECT_EQ(Sizes(out.get()), (Shape{2, 4}));
        EXPECT_EQ(Strides(out.get()), (Shape{4, 1}));
        EXPECT_EQ(Values(out.get()), Values(want.get()));
    }
    // A dot product resizes its out to 0-dim.
    Tensor v = Numbers({3}, PITH_FLOAT64), dot = Empty0(PITH_FLOAT64);
    ASSERT_EQ(pith_matmul_out(dot.get(), v.get(), v.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(pith_ndim(dot.get()), 0);
    EXPECT_EQ(Values(dot.get()), (Values_{4 + 0 + 4}));  // v = [-2, 0, 2]
}

TEST_F(OutOpsTest, ProductOutWithZeroSizeInputs)
{
    Tensor a = Numbers({0, 3}, PITH_FLOAT32), b = Numbers({3, 4}, PITH_FLOAT32);
    Tensor out = Empty0();
    ASSERT_EQ(pith_mm_out(out.get(), a.get(), b.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Sizes(out.get()), (Shape{0, 4}));
    // An empty contraction writes zeros over whatever `out` held.
    for (pith_dtype dtype : {PITH_FLOAT32, PITH_INT64, PITH_FLOAT16}) {
        Tensor k0a = Numbers({2, 0}, dtype), k0b = Numbers({0, 4}, dtype);
        Tensor filled = Full({2, 4}, 7, dtype);
        ASSERT_EQ(pith_mm_out(filled.get(), k0a.get(), k0b.get()), PITH_OK) << pith_last_error();
        EXPECT_EQ(Values(filled.get()), Values_(8, 0));
        Tensor v0 = Numbers({0}, dtype), dot = Full({}, 7, dtype);
        ASSERT_EQ(pith_matmul_out(dot.get(), v0.get(), v0.get()), PITH_OK) << pith_last_error();
        EXPECT_EQ(Values(dot.get()), (Values_{0}));
    }
    Tensor ba = Numbers({0, 2, 3}, PITH_FLOAT32), bb = Numbers({0, 3, 4}, PITH_FLOAT32);
    Tensor bout = Full({0, 2, 4}, 1);
    ASSERT_EQ(pith_bmm_out(bout.get(), ba.get(), bb.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Sizes(bout.get()), (Shape{0, 2, 4}));
    Tensor bk0a = Numbers({2, 2, 0}, PITH_FLOAT64), bk0b = Numbers({2, 0, 3}, PITH_FLOAT64);
    Tensor bk0 = Full({2, 2, 3}, 7, PITH_FLOAT64);
    ASSERT_EQ(pith_bmm_out(bk0.get(), bk0a.get(), bk0b.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(bk0.get()), Values_(12, 0));
}

TEST_F(OutOpsTest, NonContiguousProductOutKeepsItsStridesAndMemory)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({3, 4}, PITH_FLOAT32, 4);
    Tensor want(pith_mm(a.get(), b.get()));
    Tensor out = TransposedOut(2, 4);
    ASSERT_EQ(Strides(out.get()), (Shape{1, 2}));
    void *data = pith_data_ptr(out.get());
    Tensor r = BoxedProduct("mm.out", a.get(), b.get(), out.get());
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(r.get(), out.get());
    EXPECT_EQ(Strides(out.get()), (Shape{1, 2}));
    EXPECT_EQ(pith_data_ptr(out.get()), data);
    EXPECT_EQ(Values(out.get()), Values(want.get()));
    // A batched out permuted in every dim, and a row slice of a wider matrix.
    Tensor ba = Numbers({2, 2, 3}, PITH_INT32), bb = Numbers({2, 3, 4}, PITH_INT32, 1);
    Tensor bwant(pith_bmm(ba.get(), bb.get()));
    Tensor base = Full({4, 2, 2}, -1, PITH_INT32);
    const int perm[3] = {2, 1, 0};
    Tensor bout(pith_permute(base.get(), 3, perm));
    ASSERT_EQ(pith_bmm_out(bout.get(), ba.get(), bb.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Strides(bout.get()), (Shape{1, 2, 4}));
    EXPECT_EQ(Values(bout.get()), Values(bwant.get()));
    Tensor wide = Full({2, 6}, -1);
    Tensor cols = Slice(wide.get(), 1, 1, 5);
    ASSERT_EQ(pith_matmul_out(cols.get(), a.get(), b.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(cols.get()), Values(want.get()));
    EXPECT_EQ(At(wide.get(), 0), -1);  // the columns around it are untouched
    EXPECT_EQ(At(wide.get(), 5), -1);
}

TEST_F(OutOpsTest, ProductOutThatIsAnOperandGetsTheProduct)
{
    for (const char *op : {"mm.out", "matmul.out"}) {
        SCOPED_TRACE(op);
        Tensor x = Numbers({3, 3}, PITH_FLOAT32, 1);
        Tensor want(pith_mm(x.get(), x.get()));
        Tensor r = BoxedProduct(op, x.get(), x.get(), x.get());
        ASSERT_NE(r, nullptr) << pith_last_error();
        EXPECT_EQ(r.get(), x.get());
        EXPECT_EQ(Values(x.get()), Values(want.get()));
        Tensor y = Numbers({3, 3}, PITH_FLOAT64, 2), z = Numbers({3, 3}, PITH_FLOAT64, 3);
        Tensor zy(pith_mm(z.get(), y.get()));
        ASSERT_NE(BoxedProduct(op, z.get(), y.get(), y.get()), nullptr) << pith_last_error();
        EXPECT_EQ(Values(y.get()), Values(zy.get()));
    }
    Tensor bx = Numbers({2, 3, 3}, PITH_INT64, 1);
    Tensor bwant(pith_bmm(bx.get(), bx.get()));
    ASSERT_EQ(pith_bmm_out(bx.get(), bx.get(), bx.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(bx.get()), Values(bwant.get()));
}

TEST_F(OutOpsTest, ProductOutOverlappingAnOperandPartlyGetsTheProduct)
{
    Tensor y = Numbers({4, 3}, PITH_FLOAT32, 1);
    Tensor top = Slice(y.get(), 0, 0, 3), bottom = Slice(y.get(), 0, 1, 4);
    Tensor top_copy(pith_clone(top.get()));
    Tensor want(pith_mm(top_copy.get(), top_copy.get()));
    ASSERT_EQ(pith_mm_out(bottom.get(), top.get(), top.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(bottom.get()), Values(want.get()));
    EXPECT_EQ(Values(top_copy.get())[0], At(y.get(), 0));  // row 0 is not written
    // Two tensors from_blob over one buffer overlap too.
    std::vector<float> buf(12, 1.0f);
    const int64_t sizes[2] = {2, 2};
    Tensor p(pith_from_blob(buf.data(), 2, sizes, nullptr, PITH_FLOAT32, nullptr, nullptr));
    Tensor q(pith_from_blob(buf.data() + 2, 2, sizes, nullptr, PITH_FLOAT32, nullptr, nullptr));
    ASSERT_EQ(pith_mm_out(q.get(), p.get(), p.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(q.get()), (Values_{2, 2, 2, 2}));
}

TEST_F(OutOpsTest, ExpandedProductOutIsAnError)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({3, 4}, PITH_FLOAT32);
    Tensor row = Full({1, 4}, 0);
    const int64_t sizes[2] = {2, 4};
    Tensor out(pith_expand(row.get(), 2, sizes));
    EXPECT_EQ(pith_mm_out(out.get(), a.get(), b.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "more than one element of the written-to tensor"));
}

TEST_F(OutOpsTest, ProductOutOnAnotherDeviceOrNullIsAnError)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({3, 4}, PITH_FLOAT32);
    Tensor meta = Meta({2, 4});
    EXPECT_EQ(pith_mm_out(meta.get(), a.get(), b.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Expected all tensors to be on the same device"));
    Tensor ma = Meta({2, 3}), mb = Meta({3, 4}), cpu = Empty0();
    EXPECT_EQ(pith_matmul_out(cpu.get(), ma.get(), mb.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "same device"));
    EXPECT_EQ(Sizes(cpu.get()), (Shape{0}));
    EXPECT_EQ(pith_bmm_out(nullptr, a.get(), b.get()), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "argument 'out' is NULL"));
}

TEST_F(OutOpsTest, MetaProductOutThroughTheBoxedCall)
{
    for (const Product &p : Products()) {
        SCOPED_TRACE(Describe(p, PITH_FLOAT32));
        Tensor ca = Numbers(p.a, PITH_FLOAT32), cb = Numbers(p.b, PITH_FLOAT32);
        Tensor want(p.fn(ca.get(), cb.get()));
        Tensor a = Meta(p.a), b = Meta(p.b), out = Meta({0});
        Tensor r = BoxedProduct(p.op, a.get(), b.get(), out.get());
        ASSERT_NE(r, nullptr) << pith_last_error();
        EXPECT_EQ(r.get(), out.get());
        EXPECT_EQ(pith_tensor_device(out.get()), PITH_META);
        EXPECT_EQ(Sizes(out.get()), Sizes(want.get()));
        EXPECT_EQ(Strides(out.get()), Strides(want.get()));
        Tensor wrong = Meta({0}, PITH_FLOAT64);
        EXPECT_EQ(BoxedProduct(p.op, a.get(), b.get(), wrong.get()), nullptr);
        EXPECT_TRUE(HasError(PITH_ERR_TYPE, "Expected out tensor to have dtype float32"));
        Tensor full = Meta({7});
        EXPECT_EQ(BoxedProduct(p.op, a.get(), b.get(), full.get()), nullptr);
        EXPECT_TRUE(HasError(PITH_ERR_VALUE, "only an empty out= tensor is resized"));
    }
    // A meta out with CPU inputs goes to the Meta kernel, which refuses the CPU inputs.
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({3, 4}, PITH_FLOAT32);
    Tensor out = Meta({0});
    EXPECT_EQ(BoxedProduct("mm.out", a.get(), b.get(), out.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "same device"));
}

// ---- cat.out ----

Tensor CatOf(const std::vector<const pith_tensor *> &tensors, int dim)
{
    return Tensor(pith_cat(tensors.data(), tensors.size(), dim));
}

pith_status CatOut(pith_tensor *out, const std::vector<const pith_tensor *> &tensors, int dim)
{
    return pith_cat_out(out, tensors.data(), tensors.size(), dim);
}

TEST_F(OutOpsTest, CatOutMatchesTheFunctionalOp)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32, 1), b = Numbers({1, 3}, PITH_INT64, 2);
    Tensor c = Numbers({2, 1}, PITH_FLOAT32, 3);
    struct Sample {
        std::vector<const pith_tensor *> tensors;
        int dim;
    };
    for (const Sample &s : {Sample{{a.get(), b.get()}, 0}, Sample{{a.get(), c.get(), a.get()}, 1},
                            Sample{{a.get()}, -1}, Sample{{c.get(), c.get()}, -2}}) {
        Tensor want = CatOf(s.tensors, s.dim);
        ASSERT_NE(want, nullptr) << pith_last_error();
        Tensor out = Empty0(pith_tensor_dtype(want.get()));
        ASSERT_EQ(CatOut(out.get(), s.tensors, s.dim), PITH_OK) << pith_last_error();
        EXPECT_EQ(Sizes(out.get()), Sizes(want.get()));
        EXPECT_EQ(Values(out.get()), Values(want.get()));
        EXPECT_EQ(pith_tensor_dtype(out.get()), pith_tensor_dtype(want.get()));
    }
}

TEST_F(OutOpsTest, CatOutReturnsTheOutTensorAndWritesItsOwnMemory)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({2, 3}, PITH_FLOAT32, 1);
    Tensor want = CatOf({a.get(), b.get()}, 1);
    Tensor out = Full({2, 6}, 9);
    void *data = pith_data_ptr(out.get());
    int64_t version = pith_version_counter(out.get());
    Tensor r = BoxedCombine("cat.out", {a.get(), b.get()}, 1, out.get());
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(r.get(), out.get());
    EXPECT_EQ(pith_data_ptr(out.get()), data);
    EXPECT_GT(pith_version_counter(out.get()), version);
    EXPECT_EQ(Values(out.get()), Values(want.get()));
}

TEST_F(OutOpsTest, CatOutTakesAnyDtypeTheResultCanBeCastTo)
{
    Tensor f = Numbers({2}, PITH_FLOAT32), i = Numbers({1}, PITH_INT64, 1);
    Tensor want = CatOf({f.get(), i.get()}, 0);  // float32 [-2, 0, -1]
    for (pith_dtype dtype : {PITH_FLOAT64, PITH_FLOAT16, PITH_BFLOAT16}) {
        Tensor out = Empty0(dtype);
        ASSERT_EQ(CatOut(out.get(), {f.get(), i.get()}, 0), PITH_OK) << pith_last_error();
        EXPECT_EQ(pith_tensor_dtype(out.get()), dtype);
        EXPECT_EQ(Values(out.get()), Values(want.get()));
    }
    Tensor i32 = Numbers({2}, PITH_INT32), into_float = Empty0(PITH_FLOAT32);
    ASSERT_EQ(CatOut(into_float.get(), {i32.get(), i.get()}, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(into_float.get()), (Values_{-2, 0, -1}));
    for (pith_dtype dtype : {PITH_INT64, PITH_BOOL, PITH_UINT8}) {
        Tensor out = Empty0(dtype);
        EXPECT_EQ(CatOut(out.get(), {f.get(), i.get()}, 0), PITH_ERR_TYPE);
        EXPECT_TRUE(HasError(PITH_ERR_TYPE, "result type float32 can't be cast to the desired "
                                            "output type"));
        EXPECT_EQ(Sizes(out.get()), (Shape{0}));
    }
}

TEST_F(OutOpsTest, CatOutOfAnotherNonEmptyShapeIsAnErrorAndEmptyOneIsResized)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({1, 3}, PITH_FLOAT32, 1);
    Tensor wrong = Full({3, 4}, 5);
    EXPECT_EQ(CatOut(wrong.get(), {a.get(), b.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "cat: out= tensor has shape [3, 4] but the result has "
                                         "shape [3, 3]"));
    EXPECT_EQ(Values(wrong.get()), Values_(12, 5));
    Tensor want = CatOf({a.get(), b.get()}, 0);
    for (const Shape &shape : {Shape{0}, Shape{2, 0, 3}}) {
        Tensor out = Full(shape, 0);
        ASSERT_EQ(CatOut(out.get(), {a.get(), b.get()}, 0), PITH_OK) << pith_last_error();
        EXPECT_EQ(Sizes(out.get()), (Shape{3, 3}));
        EXPECT_EQ(Strides(out.get()), (Shape{3, 1}));
        EXPECT_EQ(Values(out.get()), Values(want.get()));
    }
}

TEST_F(OutOpsTest, CatOutWithZeroSizeInputs)
{
    Tensor e = Numbers({0, 3}, PITH_FLOAT32), legacy = Numbers({0}, PITH_INT64);
    Tensor a = Numbers({2, 3}, PITH_FLOAT32);
    Tensor out = Full({5}, 1);
    EXPECT_EQ(CatOut(out.get(), {e.get(), e.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "only an empty out= tensor is resized"));
    Tensor empty_out = Empty0();
    ASSERT_EQ(CatOut(empty_out.get(), {e.get(), e.get()}, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Sizes(empty_out.get()), (Shape{0, 3}));
    // The legacy skip of 1-D empty inputs, which still take part in the promotion.
    Tensor f64 = Empty0(PITH_FLOAT32);
    ASSERT_EQ(CatOut(f64.get(), {legacy.get(), a.get(), legacy.get()}, 0), PITH_OK)
        << pith_last_error();
    EXPECT_EQ(Sizes(f64.get()), (Shape{2, 3}));
    EXPECT_EQ(Values(f64.get()), Values(a.get()));
    Tensor only = Empty0(PITH_INT64);
    ASSERT_EQ(CatOut(only.get(), {legacy.get()}, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Sizes(only.get()), (Shape{0}));
}

TEST_F(OutOpsTest, NonContiguousCatOutKeepsItsStrides)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({2, 3}, PITH_FLOAT32, 2);
    Tensor want = CatOf({a.get(), b.get()}, 0);
    Tensor out = TransposedOut(4, 3);
    void *data = pith_data_ptr(out.get());
    ASSERT_EQ(CatOut(out.get(), {a.get(), b.get()}, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Strides(out.get()), (Shape{1, 4}));
    EXPECT_EQ(pith_data_ptr(out.get()), data);
    EXPECT_EQ(Values(out.get()), Values(want.get()));
}

TEST_F(OutOpsTest, CatOutThatIsAnInputIsAnErrorAndLeavesItAlone)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32);
    Values_ before = Values(a.get());
    EXPECT_EQ(CatOut(a.get(), {a.get(), a.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "cat: unsupported operation: some elements of the "
                                         "input tensor and the written-to tensor refer to a "
                                         "single memory location"));
    EXPECT_EQ(Sizes(a.get()), (Shape{2, 3}));
    EXPECT_EQ(Values(a.get()), before);
    EXPECT_EQ(CatOut(a.get(), {a.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "refer to a single memory location"));
    // An empty out in the list is refused before it is resized (PyTorch resizes it first).
    Tensor e = Empty0();
    EXPECT_EQ(CatOut(e.get(), {a.get(), e.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "refer to a single memory location"));
    EXPECT_EQ(Sizes(e.get()), (Shape{0}));
}

TEST_F(OutOpsTest, CatOutSharingMemoryWithADenseInputIsAnError)
{
    Tensor y = Numbers({6}, PITH_FLOAT32);
    Tensor head = Slice(y.get(), 0, 0, 3), middle = Slice(y.get(), 0, 2, 5);
    EXPECT_EQ(CatOut(middle.get(), {head.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "refer to a single memory location"));
    // The transpose of an input: dense and over the same bytes.
    Tensor m = Numbers({3, 3}, PITH_FLOAT32);
    Tensor mt(pith_t(m.get()));
    EXPECT_EQ(CatOut(mt.get(), {m.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "refer to a single memory location"));
    // Disjoint parts of one storage are fine.
    Tensor tail = Slice(y.get(), 0, 3, 6);
    Tensor head_copy(pith_clone(head.get()));
    ASSERT_EQ(CatOut(tail.get(), {head.get()}, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(tail.get()), Values(head_copy.get()));
}

TEST_F(OutOpsTest, CatOutOverlappingInterleavedViewsGetsTheRightValues)
{
    // Columns 0-1 and 2-3 of y into columns 2-5 of y: strided views whose extents
    // interleave, and which do share elements. PyTorch reads overwritten values here.
    Tensor y = Numbers({4, 6}, PITH_FLOAT32, 1);
    Tensor left = Slice(y.get(), 1, 0, 2), middle = Slice(y.get(), 1, 2, 4);
    Tensor out = Slice(y.get(), 1, 2, 6);
    Tensor l(pith_clone(left.get())), m(pith_clone(middle.get()));
    Tensor want = CatOf({l.get(), m.get()}, 1);
    ASSERT_EQ(CatOut(out.get(), {left.get(), middle.get()}, 1), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(out.get()), Values(want.get()));
    // Interleaved but disjoint: column 0 into column 1.
    Tensor z = Numbers({3, 2}, PITH_INT64, 2);
    Tensor c0 = Slice(z.get(), 1, 0, 1), c1 = Slice(z.get(), 1, 1, 2);
    Tensor c0_copy(pith_clone(c0.get()));
    ASSERT_EQ(CatOut(c1.get(), {c0.get()}, 1), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(c1.get()), Values(c0_copy.get()));
}

TEST_F(OutOpsTest, ExpandedCatOutIsAnError)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32);
    Tensor row = Full({1, 3}, 0);
    const int64_t sizes[2] = {4, 3};
    Tensor out(pith_expand(row.get(), 2, sizes));
    EXPECT_EQ(CatOut(out.get(), {a.get(), a.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "more than one element of the written-to tensor"));
}

TEST_F(OutOpsTest, CatOutInputErrorsAndDevices)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({2, 4}, PITH_FLOAT32);
    Tensor out = Empty0();
    EXPECT_EQ(CatOut(out.get(), {}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "expected a non-empty list of Tensors"));
    EXPECT_EQ(CatOut(out.get(), {a.get(), b.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Sizes of tensors must match except in dimension 0"));
    Tensor meta = Meta({4, 3});
    EXPECT_EQ(CatOut(meta.get(), {a.get(), a.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Expected all tensors to be on the same device"));
    EXPECT_EQ(CatOut(nullptr, {a.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "argument 'out' is NULL"));
}

TEST_F(OutOpsTest, MetaCatOutThroughTheBoxedCall)
{
    Tensor a = Meta({2, 3}), b = Meta({2, 1}, PITH_INT64), out = Meta({0});
    Tensor r = BoxedCombine("cat.out", {a.get(), b.get()}, 1, out.get());
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(r.get(), out.get());
    EXPECT_EQ(pith_tensor_device(out.get()), PITH_META);
    EXPECT_EQ(Sizes(out.get()), (Shape{2, 4}));
    Tensor ints = Meta({0}, PITH_INT32);
    EXPECT_EQ(BoxedCombine("cat.out", {a.get()}, 0, ints.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "can't be cast to the desired output type int32"));
    // Overlap is seen from the storage alone, so the meta kernel refuses what the CPU one
    // refuses.
    EXPECT_EQ(BoxedCombine("cat.out", {a.get()}, 0, a.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "refer to a single memory location"));
    Tensor big = Meta({6});
    Tensor head = Slice(big.get(), 0, 0, 3), middle = Slice(big.get(), 0, 2, 5);
    EXPECT_EQ(BoxedCombine("cat.out", {head.get()}, 0, middle.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "refer to a single memory location"));
    Tensor tail = Slice(big.get(), 0, 3, 6);
    EXPECT_NE(BoxedCombine("cat.out", {head.get()}, 0, tail.get()), nullptr)
        << pith_last_error();
}

// ---- stack.out ----

Tensor StackOf(const std::vector<const pith_tensor *> &tensors, int dim)
{
    return Tensor(pith_stack_tensors(tensors.data(), tensors.size(), dim));
}

pith_status StackOut(pith_tensor *out, const std::vector<const pith_tensor *> &tensors, int dim)
{
    return pith_stack_tensors_out(out, tensors.data(), tensors.size(), dim);
}

TEST_F(OutOpsTest, StackOutMatchesTheFunctionalOpAndReturnsOut)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({2, 3}, PITH_INT32, 1);
    for (int dim : {0, 1, 2, -1}) {
        SCOPED_TRACE(dim);
        Tensor want = StackOf({a.get(), b.get()}, dim);
        ASSERT_NE(want, nullptr) << pith_last_error();
        Tensor out = Empty0();
        Tensor r = BoxedCombine("stack.out", {a.get(), b.get()}, dim, out.get());
        ASSERT_NE(r, nullptr) << pith_last_error();
        EXPECT_EQ(r.get(), out.get());
        EXPECT_EQ(Sizes(out.get()), Sizes(want.get()));
        EXPECT_EQ(Values(out.get()), Values(want.get()));
    }
    Tensor s0 = Numbers({}, PITH_INT64), s1 = Numbers({}, PITH_INT64, 1);
    Tensor scalars = Empty0(PITH_FLOAT64);
    ASSERT_EQ(StackOut(scalars.get(), {s0.get(), s1.get()}, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Sizes(scalars.get()), (Shape{2}));
    EXPECT_EQ(Values(scalars.get()), (Values_{-2, -1}));
}

TEST_F(OutOpsTest, StackOutChecksDtypeShapeAndOverlap)
{
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({2, 3}, PITH_FLOAT32, 1);
    Tensor ints = Empty0(PITH_INT64);
    EXPECT_EQ(StackOut(ints.get(), {a.get(), b.get()}, 0), PITH_ERR_TYPE);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "can't be cast to the desired output type int64"));
    Tensor wrong = Full({2, 3}, 0);
    EXPECT_EQ(StackOut(wrong.get(), {a.get(), b.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "result has shape [2, 2, 3]"));
    Tensor c = Numbers({3, 2}, PITH_FLOAT32);
    EXPECT_EQ(StackOut(wrong.get(), {a.get(), c.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "stack expects each tensor to be equal size"));
    // out is (a view of) the inputs: the rows of y stacked back into y.
    Tensor y = Numbers({2, 3}, PITH_FLOAT32);
    Tensor r0(pith_select(y.get(), 0, 0)), r1(pith_select(y.get(), 0, 1));
    EXPECT_EQ(StackOut(y.get(), {r0.get(), r1.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "refer to a single memory location"));
    EXPECT_EQ(StackOut(nullptr, {a.get()}, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "argument 'out' is NULL"));
}

TEST_F(OutOpsTest, StackOutWithZeroSizeInputsAndANonContiguousOut)
{
    Tensor e = Numbers({0, 3}, PITH_FLOAT32);
    Tensor out = Empty0();
    ASSERT_EQ(StackOut(out.get(), {e.get(), e.get()}, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Sizes(out.get()), (Shape{2, 0, 3}));
    Tensor a = Numbers({2, 3}, PITH_FLOAT32), b = Numbers({2, 3}, PITH_FLOAT32, 1);
    Tensor want = StackOf({a.get(), b.get()}, 0);
    Tensor base = Full({3, 2, 2}, -1);
    const int perm[3] = {2, 1, 0};
    Tensor permuted(pith_permute(base.get(), 3, perm));
    ASSERT_EQ(Sizes(permuted.get()), (Shape{2, 2, 3}));
    ASSERT_EQ(StackOut(permuted.get(), {a.get(), b.get()}, 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(Strides(permuted.get()), (Shape{1, 2, 4}));
    EXPECT_EQ(Values(permuted.get()), Values(want.get()));
}

TEST_F(OutOpsTest, MetaStackOutThroughTheBoxedCall)
{
    Tensor a = Meta({2, 3}), b = Meta({2, 3}), out = Meta({0});
    Tensor r = BoxedCombine("stack.out", {a.get(), b.get()}, 1, out.get());
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(r.get(), out.get());
    EXPECT_EQ(pith_tensor_device(out.get()), PITH_META);
    EXPECT_EQ(Sizes(out.get()), (Shape{2, 2, 3}));
    Tensor full = Meta({2, 3});
    EXPECT_EQ(BoxedCombine("stack.out", {a.get(), b.get()}, 0, full.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "only an empty out= tensor is resized"));
}

// ---- the schemas ----

TEST_F(OutOpsTest, SchemasAreTorchsAndBareNamesKeepTheFunctionalOverload)
{
    const std::pair<const char *, const char *> schemas[] = {
        {"matmul.out", "matmul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"},
        {"mm.out", "mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)"},
        {"bmm.out", "bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)"},
        {"cat.out", "cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)"},
        {"stack.out", "stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)"},
    };
    for (const auto &[name, schema] : schemas) {
        const pith_op *op = pith_op_find(name);
        ASSERT_NE(op, nullptr) << name;
        EXPECT_NE(std::string(pith_op_schema(op)).find(schema), std::string::npos)
            << pith_op_schema(op);
    }
    for (const char *bare : {"matmul", "mm", "bmm", "cat", "stack"})
        EXPECT_EQ(std::string(pith_op_schema(pith_op_find(bare))).find(".out"),
                  std::string::npos)
            << bare;
}

}  // namespace
}  // namespace pith_e_test
