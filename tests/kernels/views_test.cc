// The shape-changing views: view, reshape, permute, transpose, t, expand, squeeze,
// unsqueeze, flatten, alias, detach. Expected geometry is PyTorch's (worked out by hand
// from its rules); every view shares storage and the version counter with its base.
#include "views_test_util.h"

#include "pith/interpreter.h"

namespace pith_e_test {
namespace {

class ViewsTest : public KernelFixture {};

Tensor MetaTensor(const Shape &sizes, pith_dtype dtype = PITH_FLOAT32)
{
    Shape strides(sizes.size());
    int64_t s = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
        strides[i] = s;
        s *= sizes[i] > 1 ? sizes[i] : 1;
    }
    return Tensor(pith_empty_strided((int)sizes.size(), sizes.data(), strides.data(), dtype,
                                     PITH_META));
}

// ---- view ----

TEST_F(ViewsTest, ViewOfContiguousTensorSharesStorageAndVersion)
{
    Tensor x = Iota({2, 3});
    const int64_t shape[] = {3, 2};
    Tensor v(pith_view(x.get(), 2, shape));
    ASSERT_NE(v, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(v.get()), (Shape{3, 2}));
    EXPECT_EQ(Strides(v.get()), (Shape{2, 1}));
    EXPECT_EQ(pith_storage_offset(v.get()), 0);
    EXPECT_EQ(Values(v.get()), (std::vector<double>{0, 1, 2, 3, 4, 5}));
    ExpectSharesStorageAndVersion(x.get(), v.get());
}

TEST_F(ViewsTest, ViewInfersOneMinusOne)
{
    Tensor x = Iota({2, 3});
    const int64_t shape[] = {2, -1, 1};
    Tensor v(pith_view(x.get(), 3, shape));
    ASSERT_NE(v, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(v.get()), (Shape{2, 3, 1}));
    EXPECT_EQ(Strides(v.get()), (Shape{3, 1, 1}));
}

TEST_F(ViewsTest, ViewOfTransposeKeepsChunksThatStayContiguous)
{
    Tensor x = Iota({2, 3});
    Tensor t(pith_t(x.get()));
    const int64_t shape[] = {3, 2, 1};
    Tensor v(pith_view(t.get(), 3, shape));
    ASSERT_NE(v, nullptr) << pith_last_error();
    EXPECT_EQ(Strides(v.get()), (Shape{1, 3, 3}));
    EXPECT_EQ(Values(v.get()), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST_F(ViewsTest, ViewAcrossNonContiguousDimsIsAnError)
{
    Tensor x = Iota({2, 3});
    Tensor t(pith_t(x.get()));
    const int64_t shape[] = {6};
    EXPECT_EQ(pith_view(t.get(), 1, shape), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "view size is not compatible with input tensor's size and stride (at "
                         "least one dimension spans across two contiguous subspaces). Use "
                         ".reshape(...) instead."));
}

TEST_F(ViewsTest, ViewWithWrongNumelIsAnError)
{
    Tensor x = Iota({2, 3});
    const int64_t shape[] = {2, 5};
    EXPECT_EQ(pith_view(x.get(), 2, shape), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "shape '[2, 5]' is invalid for input of size 6"));
    const int64_t inferred[] = {4, -1};
    EXPECT_EQ(pith_view(x.get(), 2, inferred), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "shape '[4, -1]' is invalid for input of size 6"));
}

TEST_F(ViewsTest, ViewRejectsTwoMinusOnesAndNegativeSizes)
{
    Tensor x = Iota({2, 3});
    const int64_t two[] = {-1, -1};
    EXPECT_EQ(pith_view(x.get(), 2, two), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "only one dimension can be inferred"));
    const int64_t neg[] = {-2, -3};
    EXPECT_EQ(pith_view(x.get(), 2, neg), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "invalid shape dimension -2"));
}

TEST_F(ViewsTest, ViewOfEmptyTensor)
{
    const int64_t sizes[] = {0, 3};
    Tensor x(pith_zeros(2, sizes, PITH_FLOAT32));
    const int64_t shape[] = {3, 0};
    Tensor v(pith_view(x.get(), 2, shape));
    ASSERT_NE(v, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(v.get()), (Shape{3, 0}));
    EXPECT_EQ(Strides(v.get()), (Shape{1, 1}));
    const int64_t flat[] = {-1};
    Tensor f(pith_view(x.get(), 1, flat));
    ASSERT_NE(f, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(f.get()), (Shape{0}));
    const int64_t ambiguous[] = {-1, 0};
    EXPECT_EQ(pith_view(x.get(), 2, ambiguous), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "cannot reshape tensor of 0 elements into shape [-1, 0] because the "
                         "unspecified dimension size -1 can be any value and is ambiguous"));
}

TEST_F(ViewsTest, ViewOfScalarAndBack)
{
    Tensor s(pith_full(0, nullptr, 7, PITH_INT64));
    const int64_t one[] = {1};
    Tensor v(pith_view(s.get(), 1, one));
    ASSERT_NE(v, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(v.get()), (Shape{1}));
    EXPECT_EQ(Strides(v.get()), (Shape{1}));
    Tensor back(pith_view(v.get(), 0, nullptr));
    ASSERT_NE(back, nullptr) << pith_last_error();
    EXPECT_EQ(pith_ndim(back.get()), 0);
    EXPECT_EQ(At(back.get(), 0), 7);
}

TEST_F(ViewsTest, ViewOfMetaTensorIsMeta)
{
    Tensor x = MetaTensor({4, 6});
    const int64_t shape[] = {2, 2, 6};
    Tensor v(pith_view(x.get(), 3, shape));
    ASSERT_NE(v, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(v.get()), PITH_META);
    EXPECT_EQ(Sizes(v.get()), (Shape{2, 2, 6}));
    EXPECT_EQ(Strides(v.get()), (Shape{12, 6, 1}));
    EXPECT_EQ(pith_data_ptr(v.get()), nullptr);
}

TEST_F(ViewsTest, ViewKeepsDtypeAndOffset)
{
    Tensor x = Iota({4, 3}, PITH_INT16);
    Tensor row(pith_select(x.get(), 0, 2));
    const int64_t shape[] = {3, 1};
    Tensor v(pith_view(row.get(), 2, shape));
    ASSERT_NE(v, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(v.get()), PITH_INT16);
    EXPECT_EQ(pith_storage_offset(v.get()), 6);
    EXPECT_EQ(Values(v.get()), (std::vector<double>{6, 7, 8}));
}

// ---- reshape ----

TEST_F(ViewsTest, ReshapeOfViewableTensorIsAView)
{
    Tensor x = Iota({2, 3});
    const int64_t shape[] = {-1};
    Tensor r(pith_reshape(x.get(), 1, shape));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{6}));
    ExpectSharesStorageAndVersion(x.get(), r.get());
}

TEST_F(ViewsTest, ReshapeOfNonViewableTensorCopies)
{
    Tensor x = Iota({2, 3});
    Tensor t(pith_t(x.get()));
    const int64_t shape[] = {6};
    Tensor r(pith_reshape(t.get(), 1, shape));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_FALSE(pith_shares_storage(r.get(), x.get()));
    EXPECT_EQ(Strides(r.get()), (Shape{1}));
    EXPECT_EQ(Values(r.get()), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST_F(ViewsTest, ReshapeWithWrongNumelIsAnError)
{
    Tensor x = Iota({2, 3});
    const int64_t shape[] = {4};
    EXPECT_EQ(pith_reshape(x.get(), 1, shape), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "reshape: shape '[4]' is invalid for input of size 6"));
}

TEST_F(ViewsTest, ReshapeOfNonContiguousMetaTensorIsMeta)
{
    Tensor x = MetaTensor({2, 3});
    Tensor t(pith_t(x.get()));
    const int64_t shape[] = {6};
    Tensor r(pith_reshape(t.get(), 1, shape));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(r.get()), PITH_META);
    EXPECT_EQ(Sizes(r.get()), (Shape{6}));
}

TEST_F(ViewsTest, ReshapeWithTooManyDimsIsAnError)
{
    Tensor x = Iota({1});
    EXPECT_EQ(pith_reshape(x.get(), PITH_MAX_DIMS + 1, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "out of range"));
}

// ---- permute, transpose, t ----

TEST_F(ViewsTest, PermuteReordersSizesAndStrides)
{
    Tensor x = Iota({2, 3, 4});
    const int dims[] = {2, 0, -2};
    Tensor p(pith_permute(x.get(), 3, dims));
    ASSERT_NE(p, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(p.get()), (Shape{4, 2, 3}));
    EXPECT_EQ(Strides(p.get()), (Shape{1, 12, 4}));
    // element (k, i, j) is x[i][j][k] = 12 i + 4 j + k
    EXPECT_EQ(At(p.get(), 1), 4);       // (0, 0, 1)
    EXPECT_EQ(At(p.get(), 3), 12);      // (0, 1, 0)
    EXPECT_EQ(At(p.get(), 6 + 5), 21);  // (1, 1, 2)
    ExpectSharesStorageAndVersion(x.get(), p.get());
}

TEST_F(ViewsTest, PermuteErrors)
{
    Tensor x = Iota({2, 3});
    const int three[] = {0, 1, 2};
    EXPECT_EQ(pith_permute(x.get(), 3, three), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "number of dimensions in the tensor input does not match the length of "
                         "the desired ordering of dimensions i.e. input.dim() = 2 is not equal "
                         "to len(dims) = 3"));
    const int dup[] = {1, -1};
    EXPECT_EQ(pith_permute(x.get(), 2, dup), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "duplicate dims are not allowed"));
    const int out[] = {0, 2};
    EXPECT_EQ(pith_permute(x.get(), 2, out), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX,
                         "Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
}

TEST_F(ViewsTest, PermuteOfScalarIsAnAlias)
{
    Tensor s(pith_full(0, nullptr, 3, PITH_FLOAT32));
    Tensor p(pith_permute(s.get(), 0, nullptr));
    ASSERT_NE(p, nullptr) << pith_last_error();
    EXPECT_EQ(pith_ndim(p.get()), 0);
    EXPECT_TRUE(pith_shares_storage(s.get(), p.get()));
}

TEST_F(ViewsTest, TransposeSwapsTwoDims)
{
    Tensor x = Iota({2, 3});
    Tensor t(pith_transpose(x.get(), -1, 0));
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(t.get()), (Shape{3, 2}));
    EXPECT_EQ(Strides(t.get()), (Shape{1, 3}));
    EXPECT_FALSE(pith_is_contiguous(t.get()));
    EXPECT_EQ(Values(t.get()), (std::vector<double>{0, 3, 1, 4, 2, 5}));
    ExpectSharesStorageAndVersion(x.get(), t.get());
}

TEST_F(ViewsTest, TransposeDimOutOfRangeIsAnIndexError)
{
    Tensor x = Iota({2, 3});
    EXPECT_EQ(pith_transpose(x.get(), 0, 2), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX,
                         "Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
}

TEST_F(ViewsTest, TransposeOfScalarAcceptsZeroAndMinusOne)
{
    Tensor s(pith_full(0, nullptr, 1, PITH_FLOAT32));
    Tensor t(pith_transpose(s.get(), 0, -1));
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(pith_ndim(t.get()), 0);
    EXPECT_EQ(pith_transpose(s.get(), 0, 1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "expected to be in range of [-1, 0], but got 1"));
}

TEST_F(ViewsTest, TOfMatrixVectorAndThreeDims)
{
    Tensor m = Iota({2, 3});
    Tensor mt(pith_t(m.get()));
    ASSERT_NE(mt, nullptr);
    EXPECT_EQ(Sizes(mt.get()), (Shape{3, 2}));
    Tensor v = Iota({4});
    Tensor vt(pith_t(v.get()));
    ASSERT_NE(vt, nullptr);
    EXPECT_EQ(Sizes(vt.get()), (Shape{4}));
    Tensor c = Iota({1, 2, 3});
    EXPECT_EQ(pith_t(c.get()), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "t() expects a tensor with <= 2 dimensions, but self is 3D"));
}

// ---- expand ----

TEST_F(ViewsTest, ExpandSizeOneDimsGetStrideZero)
{
    Tensor x = Iota({3, 1});
    const int64_t shape[] = {3, 4};
    Tensor e(pith_expand(x.get(), 2, shape));
    ASSERT_NE(e, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(e.get()), (Shape{3, 4}));
    EXPECT_EQ(Strides(e.get()), (Shape{1, 0}));
    EXPECT_EQ(Values(e.get()), (std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
    EXPECT_TRUE(pith_shares_storage(x.get(), e.get()));
}

TEST_F(ViewsTest, ExpandAddsLeadingDimsAndKeepsMinusOne)
{
    Tensor x = Iota({3});
    const int64_t shape[] = {2, -1};
    Tensor e(pith_expand(x.get(), 2, shape));
    ASSERT_NE(e, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(e.get()), (Shape{2, 3}));
    EXPECT_EQ(Strides(e.get()), (Shape{0, 1}));
    EXPECT_EQ(Values(e.get()), (std::vector<double>{0, 1, 2, 0, 1, 2}));
}

TEST_F(ViewsTest, ExpandOfScalarAndToZero)
{
    Tensor s(pith_full(0, nullptr, 5, PITH_FLOAT32));
    const int64_t shape[] = {2, 2};
    Tensor e(pith_expand(s.get(), 2, shape));
    ASSERT_NE(e, nullptr) << pith_last_error();
    EXPECT_EQ(Strides(e.get()), (Shape{0, 0}));
    EXPECT_EQ(Values(e.get()), (std::vector<double>{5, 5, 5, 5}));
    Tensor one = Iota({1});
    const int64_t zero[] = {0};
    Tensor z(pith_expand(one.get(), 1, zero));
    ASSERT_NE(z, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(z.get()), (Shape{0}));
}

TEST_F(ViewsTest, ExpandOfNonSingletonDimIsAnError)
{
    Tensor x = Iota({2, 3});
    const int64_t shape[] = {2, 4};
    EXPECT_EQ(pith_expand(x.get(), 2, shape), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "The expanded size of the tensor (4) must match the existing size (3) at "
                         "non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2, 3]"));
}

TEST_F(ViewsTest, ExpandToFewerDimsIsAnError)
{
    Tensor x = Iota({2, 3});
    const int64_t shape[] = {3};
    EXPECT_EQ(pith_expand(x.get(), 1, shape), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes "
                         "provided (1) must be greater or equal to the number of dimensions in "
                         "the tensor (2)"));
}

TEST_F(ViewsTest, ExpandMinusOneInNewLeadingDimIsAnError)
{
    Tensor x = Iota({3});
    const int64_t shape[] = {-1, 3};
    EXPECT_EQ(pith_expand(x.get(), 2, shape), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "The expanded size of the tensor (-1) isn't allowed in a leading, "
                         "non-existing dimension 0"));
}

TEST_F(ViewsTest, ExpandToNegativeOrOverflowingSizeIsAnError)
{
    Tensor x = Iota({1, 1});
    const int64_t neg[] = {-2, 1};
    EXPECT_EQ(pith_expand(x.get(), 2, neg), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative dimension -2"));
    const int64_t huge[] = {INT64_C(1) << 40, INT64_C(1) << 40};
    EXPECT_EQ(pith_expand(x.get(), 2, huge), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "overflow"));
}

// ---- squeeze, unsqueeze ----

TEST_F(ViewsTest, SqueezeDropsEverySizeOneDim)
{
    Tensor x = Iota({1, 3, 1});
    Tensor s(pith_squeeze(x.get(), nullptr));
    ASSERT_NE(s, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(s.get()), (Shape{3}));
    EXPECT_EQ(Strides(s.get()), (Shape{1}));
    ExpectSharesStorageAndVersion(x.get(), s.get());
}

TEST_F(ViewsTest, SqueezeOneDimOnlyWhenItHasSizeOne)
{
    Tensor x = Iota({1, 3, 1});
    int d = -1;
    Tensor s(pith_squeeze(x.get(), &d));
    ASSERT_NE(s, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(s.get()), (Shape{1, 3}));
    d = 1;
    Tensor same(pith_squeeze(x.get(), &d));
    ASSERT_NE(same, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(same.get()), (Shape{1, 3, 1}));
    EXPECT_NE(same.get(), x.get());
    d = 3;
    EXPECT_EQ(pith_squeeze(x.get(), &d), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "expected to be in range of [-3, 2], but got 3"));
}

TEST_F(ViewsTest, SqueezeOfScalar)
{
    Tensor s(pith_full(0, nullptr, 1, PITH_FLOAT32));
    int d = 0;
    Tensor q(pith_squeeze(s.get(), &d));
    ASSERT_NE(q, nullptr) << pith_last_error();
    EXPECT_EQ(pith_ndim(q.get()), 0);
}

TEST_F(ViewsTest, UnsqueezeInsertsSizeOneDim)
{
    Tensor x = Iota({2, 3});
    Tensor a(pith_unsqueeze(x.get(), 0));
    Tensor b(pith_unsqueeze(x.get(), 1));
    Tensor c(pith_unsqueeze(x.get(), -1));
    ASSERT_TRUE(a && b && c) << pith_last_error();
    EXPECT_EQ(Sizes(a.get()), (Shape{1, 2, 3}));
    EXPECT_EQ(Strides(a.get()), (Shape{6, 3, 1}));
    EXPECT_EQ(Sizes(b.get()), (Shape{2, 1, 3}));
    EXPECT_EQ(Strides(b.get()), (Shape{3, 3, 1}));
    EXPECT_EQ(Sizes(c.get()), (Shape{2, 3, 1}));
    EXPECT_EQ(Strides(c.get()), (Shape{3, 1, 1}));
    ExpectSharesStorageAndVersion(x.get(), b.get());
}

TEST_F(ViewsTest, UnsqueezeOfTransposeUsesNextDimsExtent)
{
    Tensor x = Iota({2, 3});
    Tensor t(pith_t(x.get()));
    Tensor u(pith_unsqueeze(t.get(), 1));
    ASSERT_NE(u, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(u.get()), (Shape{3, 1, 2}));
    EXPECT_EQ(Strides(u.get()), (Shape{1, 6, 3}));
}

TEST_F(ViewsTest, UnsqueezeErrors)
{
    Tensor x = Iota({2, 3});
    EXPECT_EQ(pith_unsqueeze(x.get(), 3), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX,
                         "Dimension out of range (expected to be in range of [-3, 2], but got 3)"));
    Shape ones(PITH_MAX_DIMS, 1);
    Tensor full(pith_zeros(PITH_MAX_DIMS, ones.data(), PITH_FLOAT32));
    EXPECT_EQ(pith_unsqueeze(full.get(), 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "at most 16 dims"));
}

TEST_F(ViewsTest, UnsqueezeOfScalar)
{
    Tensor s(pith_full(0, nullptr, 2, PITH_FLOAT32));
    Tensor u(pith_unsqueeze(s.get(), -1));
    ASSERT_NE(u, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(u.get()), (Shape{1}));
    EXPECT_EQ(Strides(u.get()), (Shape{1}));
}

// ---- flatten ----

TEST_F(ViewsTest, FlattenMergesARangeOfDims)
{
    Tensor x = Iota({2, 3, 4});
    Tensor all(pith_flatten(x.get(), 0, -1));
    Tensor tail(pith_flatten(x.get(), 1, 2));
    ASSERT_TRUE(all && tail) << pith_last_error();
    EXPECT_EQ(Sizes(all.get()), (Shape{24}));
    EXPECT_EQ(Sizes(tail.get()), (Shape{2, 12}));
    EXPECT_EQ(Strides(tail.get()), (Shape{12, 1}));
    ExpectSharesStorageAndVersion(x.get(), tail.get());
}

TEST_F(ViewsTest, FlattenOfOneDimReturnsSelf)
{
    Tensor x = Iota({2, 3});
    Tensor f(pith_flatten(x.get(), 1, 1));
    EXPECT_EQ(f.get(), x.get()); // a new reference to x itself, as PyTorch returns self
}

TEST_F(ViewsTest, FlattenOfScalarIsOneDim)
{
    Tensor s(pith_full(0, nullptr, 4, PITH_FLOAT32));
    Tensor f(pith_flatten(s.get(), 0, -1));
    ASSERT_NE(f, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(f.get()), (Shape{1}));
    EXPECT_EQ(At(f.get(), 0), 4);
}

TEST_F(ViewsTest, FlattenOfNonContiguousCopies)
{
    Tensor x = Iota({2, 3});
    Tensor t(pith_t(x.get()));
    Tensor f(pith_flatten(t.get(), 0, 1));
    ASSERT_NE(f, nullptr) << pith_last_error();
    EXPECT_FALSE(pith_shares_storage(f.get(), x.get()));
    EXPECT_EQ(Values(f.get()), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST_F(ViewsTest, FlattenEmptyKeepsOtherDims)
{
    const int64_t sizes[] = {0, 3, 4};
    Tensor x(pith_zeros(3, sizes, PITH_FLOAT32));
    Tensor f(pith_flatten(x.get(), 1, 2));
    ASSERT_NE(f, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(f.get()), (Shape{0, 12}));
}

TEST_F(ViewsTest, FlattenStartAfterEndIsAnError)
{
    Tensor x = Iota({2, 3, 4});
    EXPECT_EQ(pith_flatten(x.get(), 2, 1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "flatten() has invalid args: start_dim cannot come after end_dim"));
    EXPECT_EQ(pith_flatten(x.get(), 0, 3), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "Dimension out of range"));
}

// ---- alias, detach ----

TEST_F(ViewsTest, AliasHasSameGeometryAndSharesVersion)
{
    Tensor x = Iota({3, 4});
    Tensor t(pith_slice(x.get(), 1, 1, 4, 2));
    Tensor a(pith_alias(t.get()));
    ASSERT_NE(a, nullptr) << pith_last_error();
    EXPECT_NE(a.get(), t.get());
    EXPECT_EQ(Sizes(a.get()), Sizes(t.get()));
    EXPECT_EQ(Strides(a.get()), Strides(t.get()));
    EXPECT_EQ(pith_storage_offset(a.get()), pith_storage_offset(t.get()));
    EXPECT_EQ(pith_tensor_interpreter(a.get()), nullptr);
    ExpectSharesStorageAndVersion(x.get(), a.get());
}

TEST_F(ViewsTest, AliasDropsThePythonKeyWithoutCallingPython)
{
    Tensor x = Iota({2});
    pith_tensor_set_python_key(x.get(), true);
    Tensor a(pith_alias(x.get()));
    ASSERT_NE(a, nullptr) << pith_last_error();
    EXPECT_FALSE(pith_tensor_has_python_key(a.get()));
    EXPECT_TRUE(pith_shares_storage(a.get(), x.get()));
}

TEST_F(ViewsTest, DetachOfPlainTensorIsAnAlias)
{
    Tensor x = Iota({2, 2});
    Tensor d(pith_detach(x.get()));
    ASSERT_NE(d, nullptr) << pith_last_error();
    EXPECT_NE(d.get(), x.get());
    EXPECT_EQ(Sizes(d.get()), (Shape{2, 2}));
    ExpectSharesStorageAndVersion(x.get(), d.get());
}

TEST_F(ViewsTest, AliasOfMetaTensorIsMeta)
{
    Tensor x = MetaTensor({5});
    Tensor a(pith_alias(x.get()));
    ASSERT_NE(a, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(a.get()), PITH_META);
}

TEST_F(ViewsTest, NullTensorIsAnErrorNotACrash)
{
    EXPECT_EQ(pith_alias(nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
    EXPECT_EQ(pith_t(nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
    EXPECT_EQ(pith_detach(nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
}

} // namespace
} // namespace pith_e_test
