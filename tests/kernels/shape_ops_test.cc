// roll, flip, repeat, repeat_interleave, outer, meshgrid and einsum through the public C
// API (against reference loops, for every dtype and for strided, 0-dim and empty inputs),
// einsum's equation parser (kernels/einsum.h) on its own, and a robustness loop that
// feeds random equation strings and shapes to both: errors, never crashes.
#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "kernels/einsum.h"
#include "views_test_util.h"

namespace pith_e_test {
namespace {

class ShapeOpsTest : public KernelFixture {};

using Values_ = std::vector<double>;

// Iota in any dtype (through a float32 tensor; the values are small integers).
Tensor IotaOf(const Shape &sizes, pith_dtype dtype)
{
    Tensor f = Iota(sizes);
    Tensor t(pith_to_dtype(f.get(), dtype));
    EXPECT_NE(t, nullptr) << pith_last_error();
    return t;
}

// The row-major index of `index` in `sizes`.
int64_t Flat(const Shape &sizes, const Shape &index)
{
    int64_t f = 0;
    for (size_t d = 0; d < sizes.size(); d++)
        f = f * sizes[d] + index[d];
    return f;
}

// Every multi-index of `sizes`, row-major.
std::vector<Shape> Indices(const Shape &sizes)
{
    std::vector<Shape> all;
    int64_t n = 1;
    for (int64_t s : sizes)
        n *= s;
    for (int64_t i = 0; i < n; i++) {
        Shape index(sizes.size());
        int64_t r = i;
        for (size_t d = sizes.size(); d-- > 0;) {
            index[d] = r % sizes[d];
            r /= sizes[d];
        }
        all.push_back(index);
    }
    return all;
}

Values_ Expected(const Shape &sizes, const Values_ &in,
                 const std::function<Shape(const Shape &)> &source_of)
{
    Values_ out;
    for (const Shape &index : Indices(sizes))
        out.push_back(in[Flat(sizes, source_of(index))]);
    return out;
}

// ---- roll ----

TEST_F(ShapeOpsTest, RollMatchesAReferenceForEveryDtype)
{
    const Shape sizes = {3, 4};
    const int64_t shifts[] = {1, -6};
    const int dims[] = {0, 1};
    for (pith_dtype dtype : pith_test::kAllDtypes) {
        SCOPED_TRACE(pith_dtype_name(dtype));
        Tensor x = IotaOf(sizes, dtype);
        Tensor r(pith_roll(x.get(), 2, shifts, 2, dims));
        ASSERT_NE(r, nullptr) << pith_last_error();
        EXPECT_EQ(pith_tensor_dtype(r.get()), dtype);
        EXPECT_FALSE(pith_shares_storage(r.get(), x.get()));
        Values_ want = Expected(sizes, Values(x.get()), [](const Shape &i) {
            return Shape{(i[0] + 3 - 1) % 3, (i[1] + 4 + 6) % 4};
        });
        if (dtype == PITH_BOOL)
            for (double &v : want)
                v = v != 0;
        EXPECT_EQ(Values(r.get()), want);
    }
}

TEST_F(ShapeOpsTest, RollFlatRollsTheRowMajorSequenceOfAStridedInput)
{
    Tensor x = Iota({3, 2});
    Tensor t(pith_t(x.get())); // 2 x 3, values 0 2 4 / 1 3 5
    const int64_t shift = 2;
    Tensor r(pith_roll(t.get(), 1, &shift, 0, nullptr));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 3}));
    EXPECT_EQ(Values(r.get()), (Values_{3, 5, 0, 2, 4, 1}));
    EXPECT_TRUE(pith_is_contiguous(r.get()));
}

TEST_F(ShapeOpsTest, RollAddsTheShiftsOfARepeatedDimAndWrapsLargeShifts)
{
    Tensor x = Iota({5});
    const int64_t shifts[] = {INT64_MAX, 3, INT64_MIN};
    const int dims[] = {0, -1, 0};
    Tensor r(pith_roll(x.get(), 3, shifts, 3, dims));
    ASSERT_NE(r, nullptr) << pith_last_error();
    // INT64_MAX % 5 = 2, INT64_MIN % 5 = -3: 2 + 3 - 3 = 2
    EXPECT_EQ(Values(r.get()), (Values_{3, 4, 0, 1, 2}));
}

TEST_F(ShapeOpsTest, RollOfEmptyAndZeroDimTensors)
{
    const int64_t shift = 1, z[] = {0, 3};
    const int bad_dim = 7;
    Tensor e(pith_zeros(2, z, PITH_FLOAT32));
    Tensor et(pith_t(e.get()));
    Tensor r(pith_roll(et.get(), 1, &shift, 1, &bad_dim)); // an empty tensor: dims unchecked
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Strides(r.get()), (Shape{1, 3})); // its layout kept, as PyTorch's clone
    Tensor s(pith_full(0, nullptr, 5, PITH_INT64));
    Tensor rs(pith_roll(s.get(), 1, &shift, 0, nullptr));
    ASSERT_NE(rs, nullptr) << pith_last_error();
    EXPECT_EQ(Values(rs.get()), (Values_{5}));
    const int zero = 0;
    EXPECT_EQ(pith_roll(s.get(), 1, &shift, 1, &zero), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions"));
}

TEST_F(ShapeOpsTest, RollErrorsAreTorchs)
{
    Tensor x = Iota({2, 3});
    const int64_t shifts[] = {1, 2};
    const int dims[] = {0, 2};
    EXPECT_EQ(pith_roll(x.get(), 0, shifts, 0, dims), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "`shifts` required"));
    EXPECT_EQ(pith_roll(x.get(), 2, shifts, 1, dims), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "shifts and dimensions must align. shifts: 2, dims:1"));
    EXPECT_EQ(pith_roll(x.get(), 2, shifts, 2, dims), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "expected to be in range of [-2, 1], but got 2"));
}

// ---- flip ----

TEST_F(ShapeOpsTest, FlipMatchesAReferenceForEveryDtypeAndKeepsADenseLayout)
{
    const int dims[] = {0, -1};
    for (pith_dtype dtype : pith_test::kAllDtypes) {
        SCOPED_TRACE(pith_dtype_name(dtype));
        Tensor base = IotaOf({4, 2, 3}, dtype);
        const int order[] = {2, 0, 1};
        Tensor x(pith_permute(base.get(), 3, order)); // 3 x 4 x 2, dense but permuted
        Tensor r(pith_flip(x.get(), 2, dims));
        ASSERT_NE(r, nullptr) << pith_last_error();
        EXPECT_EQ(Strides(r.get()), Strides(x.get()));
        Shape sizes = Sizes(x.get());
        Values_ in = Values(x.get());
        EXPECT_EQ(Values(r.get()), Expected(sizes, in, [&](const Shape &i) {
                      return Shape{sizes[0] - 1 - i[0], i[1], sizes[2] - 1 - i[2]};
                  }));
    }
}

TEST_F(ShapeOpsTest, FlipOfANonDenseInputIsContiguous)
{
    Tensor x = Iota({1, 3});
    const int64_t to[] = {2, 3};
    Tensor e(pith_expand(x.get(), 2, to));
    const int dim = 1;
    Tensor r(pith_flip(e.get(), 1, &dim));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Strides(r.get()), (Shape{3, 1}));
    EXPECT_EQ(Values(r.get()), (Values_{2, 1, 0, 2, 1, 0}));
}

TEST_F(ShapeOpsTest, FlipErrorsAreTorchs)
{
    Tensor x = Iota({2, 3});
    const int dup[] = {0, -2}, out[] = {2};
    EXPECT_EQ(pith_flip(x.get(), 2, dup), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "dim 0 appears multiple times in the list of dims"));
    EXPECT_EQ(pith_flip(x.get(), 1, out), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "Dimension out of range"));
}

// ---- repeat ----

TEST_F(ShapeOpsTest, RepeatTilesAStridedInputAndPadsDims)
{
    Tensor base = Iota({3, 2});
    Tensor x(pith_t(base.get())); // 2 x 3: 0 2 4 / 1 3 5
    const int64_t repeats[] = {2, 1, 2};
    Tensor r(pith_repeat(x.get(), 3, repeats));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 2, 6}));
    Values_ in = Values(x.get());
    Values_ want;
    for (const Shape &i : Indices({2, 2, 6}))
        want.push_back(in[Flat({2, 3}, {i[1] % 2, i[2] % 3})]);
    EXPECT_EQ(Values(r.get()), want);
}

TEST_F(ShapeOpsTest, RepeatForEveryDtypeWithZeroRepeats)
{
    for (pith_dtype dtype : pith_test::kAllDtypes) {
        Tensor x = IotaOf({2}, dtype);
        const int64_t twice[] = {3, 2}, none[] = {0, 2};
        Tensor r(pith_repeat(x.get(), 2, twice));
        ASSERT_NE(r, nullptr) << pith_last_error();
        EXPECT_EQ(Values(r.get()), (Values_{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}));
        Tensor z(pith_repeat(x.get(), 2, none));
        ASSERT_NE(z, nullptr) << pith_last_error();
        EXPECT_EQ(Sizes(z.get()), (Shape{0, 4}));
    }
}

TEST_F(ShapeOpsTest, RepeatErrorsAreTorchs)
{
    Tensor x = Iota({2, 3});
    const int64_t one[] = {2}, negative[] = {-1, 0};
    EXPECT_EQ(pith_repeat(x.get(), 1, one), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Number of dimensions of repeat dims can not be smaller"));
    EXPECT_EQ(pith_repeat(x.get(), 2, negative), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "Trying to create tensor with negative dimension -2: [-2, 0]"));
    const int64_t huge[] = {INT64_MAX, 1};
    EXPECT_EQ(pith_repeat(x.get(), 2, huge), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "overflows int64"));
}

// Above the grain size the copies split between threads (rows of the block map).
TEST_F(ShapeOpsTest, LargeCopiesMatchTheReference)
{
    int saved = pith_get_num_threads();
    pith_set_num_threads(2);
    const Shape sizes = {300, 7, 40}; // 84000 elements
    Tensor base = Iota({40, 7, 300}, PITH_INT32);
    const int order[] = {2, 1, 0};
    Tensor x(pith_permute(base.get(), 3, order));
    Values_ in = Values(x.get());
    const int64_t shifts[] = {101, -3};
    const int roll_dims[] = {0, 2};
    Tensor r(pith_roll(x.get(), 2, shifts, 2, roll_dims));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Values(r.get()), Expected(sizes, in, [](const Shape &i) {
                  return Shape{(i[0] + 300 - 101) % 300, i[1], (i[2] + 3) % 40};
              }));
    const int flip_dims[] = {0, 1};
    Tensor f(pith_flip(x.get(), 2, flip_dims));
    ASSERT_NE(f, nullptr) << pith_last_error();
    EXPECT_EQ(Values(f.get()), Expected(sizes, in, [](const Shape &i) {
                  return Shape{299 - i[0], 6 - i[1], i[2]};
              }));
    const int64_t repeats[] = {1, 2, 1};
    Tensor t(pith_repeat(x.get(), 3, repeats));
    ASSERT_NE(t, nullptr) << pith_last_error();
    Values_ want;
    for (const Shape &i : Indices({300, 14, 40}))
        want.push_back(in[Flat(sizes, {i[0], i[1] % 7, i[2]})]);
    EXPECT_EQ(Values(t.get()), want);
    const int dim = 1;
    Tensor ri(pith_repeat_interleave(x.get(), 2, &dim, nullptr));
    ASSERT_NE(ri, nullptr) << pith_last_error();
    want.clear();
    for (const Shape &i : Indices({300, 14, 40}))
        want.push_back(in[Flat(sizes, {i[0], i[1] / 2, i[2]})]);
    EXPECT_EQ(Values(ri.get()), want);
    pith_set_num_threads(saved);
}

// ---- repeat_interleave ----

TEST_F(ShapeOpsTest, RepeatInterleaveByAnIntAlongADimAndFlattened)
{
    Tensor x = Iota({2, 3});
    const int dim = 1;
    Tensor r(pith_repeat_interleave(x.get(), 2, &dim, nullptr));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 6}));
    EXPECT_EQ(Values(r.get()), (Values_{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
    Tensor flat(pith_repeat_interleave(x.get(), 1, nullptr, nullptr));
    ASSERT_NE(flat, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(flat.get()), (Shape{6}));
    const int64_t wrong = 5;
    EXPECT_EQ(pith_repeat_interleave(x.get(), 2, nullptr, &wrong), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Invalid output_size, expected 12 but got 5"));
    EXPECT_EQ(pith_repeat_interleave(x.get(), -1, nullptr, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Repeats must be non-negative"));
}

TEST_F(ShapeOpsTest, RepeatInterleaveByCountsForEveryDtype)
{
    Tensor counts = FromValues({2}, PITH_INT32, {1, 2});
    const int dim = 0;
    for (pith_dtype dtype : pith_test::kAllDtypes) {
        SCOPED_TRACE(pith_dtype_name(dtype));
        Tensor x = IotaOf({2, 2}, dtype);
        Tensor r(pith_repeat_interleave_tensor(x.get(), counts.get(), &dim, nullptr));
        ASSERT_NE(r, nullptr) << pith_last_error();
        EXPECT_EQ(pith_tensor_dtype(r.get()), dtype);
        Values_ want = {0, 1, 2, 3, 2, 3};
        if (dtype == PITH_BOOL)
            want = {0, 1, 1, 1, 1, 1};
        EXPECT_EQ(Values(r.get()), want);
    }
}

TEST_F(ShapeOpsTest, RepeatInterleaveIndicesKeepTheCountsDtype)
{
    Tensor counts = FromValues({3}, PITH_INT32, {2, 0, 3});
    Tensor r(pith_repeat_interleave_indices(counts.get(), nullptr));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_INT32);
    EXPECT_EQ(Values(r.get()), (Values_{0, 0, 2, 2, 2}));
    const int64_t size = 4;
    EXPECT_EQ(pith_repeat_interleave_indices(counts.get(), &size), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "allocated size does not match required size"));
    Tensor negative = FromValues({2}, PITH_INT64, {1, -1});
    EXPECT_EQ(pith_repeat_interleave_indices(negative.get(), nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "repeats can not be negative"));
    Tensor floats = FromValues({2}, PITH_FLOAT32, {1, 1});
    EXPECT_EQ(pith_repeat_interleave_indices(floats.get(), nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED,
                         "\"repeat_interleave_cpu\" not implemented for 'Float'"));
    Tensor square = FromValues({1, 1}, PITH_INT64, {1});
    EXPECT_EQ(pith_repeat_interleave_indices(square.get(), nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "only accept 1D vector as repeat"));
}

TEST_F(ShapeOpsTest, RepeatInterleaveIndicesSplitBetweenThreads)
{
    const int64_t n = 50000;
    Tensor ones(pith_full(1, &n, 1, PITH_INT64));
    Tensor r(pith_repeat_interleave_indices(ones.get(), nullptr));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(At(r.get(), 0), 0);
    EXPECT_EQ(At(r.get(), 31337), 31337);
    EXPECT_EQ(At(r.get(), n - 1), n - 1);
}

TEST_F(ShapeOpsTest, RepeatInterleaveOnMetaNeedsAnOutputSizeForCounts)
{
    Tensor x = MetaTensor({2, 3});
    Tensor counts = MetaTensor({2}, PITH_INT64);
    const int dim = 0;
    const int64_t size = 5;
    Tensor r(pith_repeat_interleave_tensor(x.get(), counts.get(), &dim, &size));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{5, 3}));
    EXPECT_EQ(pith_tensor_device(r.get()), PITH_META);
    EXPECT_EQ(pith_repeat_interleave_tensor(x.get(), counts.get(), &dim, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "not supported on the meta device"));
}

// ---- outer ----

TEST_F(ShapeOpsTest, OuterPromotesAsMul)
{
    Tensor a = FromValues({2}, PITH_INT32, {1, 2});
    Tensor b = FromValues({3}, PITH_FLOAT64, {1, 10, 100});
    Tensor r(pith_outer(a.get(), b.get()));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_FLOAT64);
    EXPECT_EQ(Values(r.get()), (Values_{1, 10, 100, 2, 20, 200}));
    Tensor m = Iota({2, 2});
    EXPECT_EQ(pith_outer(m.get(), b.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "outer: Expected 1-D argument self, but got 2-D"));
    EXPECT_EQ(pith_outer(a.get(), m.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "outer: Expected 1-D argument vec2, but got 2-D"));
}

// ---- meshgrid ----

TEST_F(ShapeOpsTest, MeshgridGivesExpandedViewsAndXySwapsTheFirstTwo)
{
    Tensor a = Iota({2}), b = Iota({3}), c(pith_full(0, nullptr, 7, PITH_FLOAT32));
    const pith_tensor *in[] = {a.get(), b.get(), c.get()};
    TensorList ij, xy;
    ij.data = pith_meshgrid(in, 3, "ij", &ij.n);
    ASSERT_NE(ij.data, nullptr) << pith_last_error();
    ASSERT_EQ(ij.n, 3u);
    for (size_t i = 0; i < 3; i++) {
        EXPECT_EQ(Sizes(ij[i]), (Shape{2, 3, 1}));
        EXPECT_TRUE(pith_shares_storage(ij[i], in[i]));
    }
    EXPECT_EQ(Strides(ij[0]), (Shape{1, 0, 1})); // PyTorch's strides, size-one dim included
    EXPECT_EQ(Values(ij[1]), (Values_{0, 1, 2, 0, 1, 2}));
    xy.data = pith_meshgrid(in, 3, "xy", &xy.n);
    ASSERT_NE(xy.data, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(xy[0]), (Shape{3, 2, 1}));
    EXPECT_EQ(Values(xy[0]), (Values_{0, 1, 0, 1, 0, 1}));
    EXPECT_EQ(Values(xy[1]), (Values_{0, 0, 1, 1, 2, 2}));
}

TEST_F(ShapeOpsTest, MeshgridErrorsAreTorchs)
{
    Tensor a = Iota({2}), m = Iota({2, 2});
    Tensor i = IotaOf({2}, PITH_INT64);
    size_t n = 0;
    EXPECT_EQ(pith_meshgrid(nullptr, 0, nullptr, &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "meshgrid expects a non-empty TensorList"));
    const pith_tensor *mixed[] = {a.get(), i.get()};
    EXPECT_EQ(pith_meshgrid(mixed, 2, "foo", &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "meshgrid expects all tensors to have the same dtype"));
    const pith_tensor *two[] = {a.get(), m.get()};
    EXPECT_EQ(pith_meshgrid(two, 2, "foo", &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "indexing must be one of \"xy\" or \"ij\", but received: foo"));
    EXPECT_EQ(pith_meshgrid(two, 2, "xy", &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Expected 0D or 1D tensor in the tensor list"));
}

// ---- einsum ----

Tensor Einsum(const char *equation, std::initializer_list<const pith_tensor *> operands)
{
    std::vector<const pith_tensor *> v(operands);
    return Tensor(pith_einsum(equation, v.data(), v.size()));
}

TEST_F(ShapeOpsTest, EinsumMatmulBatchedMatmulTraceDiagonalAndOuter)
{
    Tensor a = Iota({2, 3}), b = Iota({3, 2}), s = Iota({3, 3});
    Tensor mm(pith_matmul(a.get(), b.get()));
    Tensor e = Einsum("ij,jk->ik", {a.get(), b.get()});
    ASSERT_NE(e, nullptr) << pith_last_error();
    EXPECT_EQ(Values(e.get()), Values(mm.get()));
    Tensor trace = Einsum("ii", {s.get()});
    ASSERT_NE(trace, nullptr) << pith_last_error();
    EXPECT_EQ(Values(trace.get()), (Values_{0 + 4 + 8}));
    Tensor diag = Einsum("ii->i", {s.get()});
    ASSERT_NE(diag, nullptr) << pith_last_error();
    EXPECT_EQ(Values(diag.get()), (Values_{0, 4, 8}));
    EXPECT_TRUE(pith_shares_storage(diag.get(), s.get())); // a view, as in PyTorch
    Tensor u = Iota({2}), v = Iota({3});
    Tensor outer = Einsum("i,j", {u.get(), v.get()});
    ASSERT_NE(outer, nullptr) << pith_last_error();
    EXPECT_EQ(Values(outer.get()), (Values_{0, 0, 0, 0, 1, 2}));
    Tensor x = Iota({4, 2, 3}), y = Iota({4, 3, 2});
    Tensor bmm(pith_bmm(x.get(), y.get()));
    Tensor batched = Einsum("...ij,...jk", {x.get(), y.get()});
    ASSERT_NE(batched, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(batched.get()), (Shape{4, 2, 2}));
    EXPECT_EQ(Values(batched.get()), Values(bmm.get()));
}

TEST_F(ShapeOpsTest, EinsumSumsAnIntegerOperandToInt64AsTorch)
{
    Tensor a = IotaOf({2, 3}, PITH_INT32), b = IotaOf({3, 2}, PITH_INT32);
    Tensor sum = Einsum("ij->i", {a.get()});
    ASSERT_NE(sum, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(sum.get()), PITH_INT64);
    EXPECT_EQ(Values(sum.get()), (Values_{3, 12}));
    Tensor product = Einsum("ij,jk->ik", {a.get(), b.get()});
    ASSERT_NE(product, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(product.get()), PITH_INT32);
}

TEST_F(ShapeOpsTest, EinsumRejectsWhatTorchsBmmRejects)
{
    Tensor a = Iota({2, 3});
    Tensor b = IotaOf({3, 2}, PITH_FLOAT64), c = IotaOf({3, 2}, PITH_BOOL);
    Tensor d = IotaOf({2, 3}, PITH_BOOL);
    EXPECT_EQ(Einsum("ij,jk", {a.get(), b.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "expected scalar type Float but found Double"));
    EXPECT_EQ(Einsum("ij,jk", {d.get(), c.get()}), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "\"bmm\" not implemented for 'Bool'"));
}

// The parser alone: aligned indices (Note [Einsum's aligned indices]).
struct Plan {
    einsum_plan plan{};
    pith_status status;
    Plan(const char *equation, const std::vector<Shape> &shapes)
    {
        std::vector<int> ndims;
        std::vector<const int64_t *> sizes;
        for (const Shape &s : shapes) {
            ndims.push_back((int)s.size());
            sizes.push_back(s.data());
        }
        status = einsum_plan_make(equation, shapes.size(), ndims.data(), sizes.data(), &plan);
    }
    ~Plan()
    {
        if (status == PITH_OK)
            einsum_plan_free(&plan);
    }
    std::string names() const { return std::string(plan.names, (size_t)plan.nindices); }
};

TEST_F(ShapeOpsTest, EinsumPlanOrdersAnImplicitOutputUppercaseFirst)
{
    Plan p("bA,Ab", {{2, 3}, {3, 2}});
    ASSERT_EQ(p.status, PITH_OK) << pith_last_error();
    EXPECT_EQ(p.plan.out_ndim, 0); // every label twice: all summed
    EXPECT_EQ(p.names(), "Ab");
    Plan q("zBa", {{1, 2, 3}});
    ASSERT_EQ(q.status, PITH_OK) << pith_last_error();
    EXPECT_EQ(q.plan.out_ndim, 3);
    EXPECT_EQ(q.names(), "Baz");
    EXPECT_EQ(q.plan.ops[0].index_of_dim[0], 2);
    EXPECT_EQ(q.plan.sizes[2], 1);
    EXPECT_EQ(q.plan.counts[2], 0); // size one: broadcasts, counted nowhere
}

TEST_F(ShapeOpsTest, EinsumPlanPutsTheEllipsisWhereTheOutputSaysAndBroadcastsIt)
{
    Plan p("i...,...j->j...", {{2, 5, 1}, {4, 3}});
    ASSERT_EQ(p.status, PITH_OK) << pith_last_error();
    EXPECT_EQ(p.plan.out_ndim, 3);
    EXPECT_EQ(p.names(), "j..i");
    EXPECT_EQ(p.plan.sizes[1], 5);
    EXPECT_EQ(p.plan.sizes[2], 4); // (5, 1) against (4): right-aligned
    EXPECT_EQ(p.plan.ops[1].index_of_dim[0], 2);
    Plan q("i...->i", {{2, 5, 6}});
    ASSERT_EQ(q.status, PITH_OK) << pith_last_error();
    EXPECT_EQ(q.plan.out_ndim, 1);
    EXPECT_EQ(q.plan.nindices, 3); // the ellipsis's dims are summed
}

TEST_F(ShapeOpsTest, EinsumPlanMapsARepeatedLabelToOneIndex)
{
    Plan p("iji->j", {{3, 4, 3}});
    ASSERT_EQ(p.status, PITH_OK) << pith_last_error();
    EXPECT_EQ(p.plan.ops[0].index_of_dim[0], p.plan.ops[0].index_of_dim[2]);
    EXPECT_EQ(p.plan.ops[0].index_of_dim[1], 0);
}

struct Malformed {
    const char *equation;
    std::vector<Shape> shapes;
    const char *message;
};

TEST_F(ShapeOpsTest, EinsumPlanRejectsMalformedEquationsWithTorchsMessages)
{
    const Malformed cases[] = {
        {"ij,jk->ik", {{2, 3}}, "fewer operands were provided than specified in the equation"},
        {"ij", {{2, 3}, {3, 4}}, "more operands were provided than specified in the equation"},
        {"ijk", {{2, 3}}, "the number of subscripts in the equation (3) does not match the number "
                          "of dimensions (2) for operand 0 and no ellipsis was given"},
        {"i...jkl", {{2, 3}}, "the number of subscripts in the equation (4) is more than the "
                              "number of dimensions (2) for operand 0"},
        {"ij->ii", {{2, 3}}, "output subscript i appears more than once in the output"},
        {"ij->k", {{2, 3}}, "output subscript k does not appear in the equation for any input "
                            "operand"},
        {"i.j", {{2, 3}}, "found '.' for operand 0 that is not part of any ellipsis"},
        {"..", {{2}}, "found '.' for operand 0 that is not part of any ellipsis"},
        {"...i...", {{2, 3}}, "found '.' for operand 0 for which an ellipsis was already found"},
        {"ij->...i...", {{2, 3}}, "found '.' for output but an ellipsis (...) was already found"},
        {"ij->i.", {{2, 3}}, "found '.' for output that is not part of any ellipsis (...)"},
        {"i1", {{3}}, "invalid subscript given at index 1 in the equation string, subscripts "
                      "must be in [a-zA-Z]"},
        {"i->1", {{3}}, "invalid subscript given at index 3"},
        {"ij->>", {{2, 3}}, "invalid subscript given at index 4"},
        {"ii", {{2, 3}}, "subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"},
        {"i,i", {{2}, {3}}, "subscript i has size 3 for operand 1 which does not broadcast with "
                            "previously seen size 2"},
        {"...,...", {{2}, {3}}, "dimension 0 covered by ellipsis in operand 1has size 3 which does "
                                "not broadcast with previously seen ellipsis with size 2 for the "
                                "respective dimension"},
        {"", {}, "must provide at least one operand"},
    };
    for (const Malformed &c : cases) {
        SCOPED_TRACE(c.equation);
        Plan p(c.equation, c.shapes);
        EXPECT_NE(p.status, PITH_OK);
        EXPECT_TRUE(HasError(PITH_ERR_VALUE, std::string("einsum(): ") + c.message));
    }
}

TEST_F(ShapeOpsTest, EinsumPlanRefusesAnOutputWiderThanATensor)
{
    std::vector<Shape> shapes = {Shape(9, 1), Shape(8, 1)};
    Plan p("abcdefghi,jklmnopq->abcdefghijklmnopq", shapes);
    EXPECT_NE(p.status, PITH_OK);
    EXPECT_TRUE(HasError(PITH_ERR_NOT_IMPLEMENTED, "at most 16"));
}

// Random equations over random ranks and sizes: mostly well-formed ones (operands whose
// subscripts, ellipses included, fit their ranks, with sizes that agree, broadcast or
// clash), then perhaps one byte changed into a letter, a dot, a comma, an arrow's half, a
// space, a digit or a non-ASCII byte. The parser and einsum itself end in a plan or an
// error, never a crash, and a result has the plan's output shape.
struct RandomCase {
    std::string equation;
    std::vector<Shape> shapes;
};

RandomCase RandomEinsum(std::mt19937 &rng)
{
    const char *tokens[] = {"i", "j", "k", "A", "..."};
    int64_t size_of[4] = {1 + (int64_t)(rng() % 3), 1 + (int64_t)(rng() % 3),
                          (int64_t)(rng() % 3), 1 + (int64_t)(rng() % 2)};
    RandomCase c;
    size_t nops = 1 + rng() % 3;
    for (size_t op = 0; op < nops; op++) {
        Shape shape;
        if (op > 0)
            c.equation += ',';
        for (size_t t = 0, n = rng() % 4; t < n; t++) {
            int which = (int)(rng() % 5);
            c.equation += tokens[which];
            if (which == 4) {
                for (size_t e = 0, m = rng() % 3; e < m; e++)
                    shape.push_back(1 + (int64_t)(rng() % 2));
            } else {
                int roll = (int)(rng() % 8);
                shape.push_back(roll == 0 ? 1 : roll == 1 ? (int64_t)(rng() % 4) : size_of[which]);
            }
        }
        if (rng() % 10 == 0 && !shape.empty())
            shape.pop_back(); // a rank that does not fit
        c.shapes.push_back(shape);
    }
    if (rng() % 2) {
        c.equation += "->";
        for (size_t t = 0, n = rng() % 4; t < n; t++)
            c.equation += tokens[rng() % 5];
    }
    const std::string noise = "ijkAZ.,->  1\xff";
    if (rng() % 3 == 0 && !c.equation.empty())
        c.equation[rng() % c.equation.size()] = noise[rng() % noise.size()];
    return c;
}

TEST_F(ShapeOpsTest, EinsumSurvivesRandomEquations)
{
    std::mt19937 rng(12345);
    int successes = 0, failures = 0;
    for (int round = 0; round < 4000; round++) {
        RandomCase c = RandomEinsum(rng);
        std::vector<Tensor> operands;
        std::vector<const pith_tensor *> raw;
        for (const Shape &s : c.shapes) {
            operands.push_back(IotaOf(s, PITH_FLOAT32));
            raw.push_back(operands.back().get());
        }
        SCOPED_TRACE(c.equation);
        Plan p(c.equation.c_str(), c.shapes);
        if (p.status != PITH_OK) {
            EXPECT_TRUE(p.status == PITH_ERR_VALUE || p.status == PITH_ERR_NOT_IMPLEMENTED);
            pith_clear_error();
        } else {
            for (size_t i = 0; i < c.shapes.size(); i++)
                for (int d = 0; d < p.plan.ops[i].ndim; d++)
                    EXPECT_LT(p.plan.ops[i].index_of_dim[d], p.plan.nindices);
        }
        Tensor r(pith_einsum(c.equation.c_str(), raw.data(), raw.size()));
        EXPECT_EQ(r != nullptr, p.status == PITH_OK) << pith_last_error();
        (r ? successes : failures)++;
        if (r) {
            EXPECT_EQ(pith_ndim(r.get()), p.plan.out_ndim);
            for (int d = 0; d < p.plan.out_ndim; d++)
                EXPECT_EQ(pith_size(r.get(), d), p.plan.sizes[d]);
        }
        pith_clear_error();
    }
    // the loop reaches the contractions, not only the parser's errors
    EXPECT_GT(successes, 1000);
    EXPECT_GT(failures, 1000);
}

} // namespace
} // namespace pith_e_test
