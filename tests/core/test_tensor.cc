/* Tensor construction, validation, metadata, views, from_blob and element reads. */
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "core_test.h"

namespace {

class TensorTest : public CoreTest {};

TEST_F(TensorTest, EmptyHasRequestedGeometryForEveryDtype)
{
    const int64_t sizes[] = {2, 3};
    for (pith_dtype d : kAllDtypes) {
        Tensor t(pith_empty(2, sizes, d));
        ASSERT_NE(t, nullptr) << pith_dtype_name(d) << ": " << pith_last_error();
        EXPECT_EQ(pith_ndim(t.get()), 2);
        EXPECT_EQ(pith_size(t.get(), 0), 2);
        EXPECT_EQ(pith_size(t.get(), 1), 3);
        EXPECT_EQ(pith_stride(t.get(), 0), 3);
        EXPECT_EQ(pith_stride(t.get(), 1), 1);
        EXPECT_EQ(pith_numel(t.get()), 6);
        EXPECT_EQ(pith_tensor_dtype(t.get()), d);
        EXPECT_EQ(pith_tensor_device(t.get()), PITH_CPU);
        EXPECT_TRUE(pith_is_contiguous(t.get()));
        EXPECT_EQ(pith_storage_offset(t.get()), 0);
        EXPECT_EQ(shim_storage_nbytes(t.get()), 6 * pith_dtype_size(d));
        EXPECT_EQ(shim_keys(t.get()), shim_key_cpu());
    }
    EXPECT_EQ(pith_last_status(), PITH_OK);
}

TEST_F(TensorTest, DataIs64ByteAlignedForSmallAndLargeTensors)
{
    for (int64_t n : {1, 7, 100, 1000, 1 << 20}) {
        Tensor t(pith_empty(1, &n, PITH_FLOAT32));
        ASSERT_NE(t, nullptr);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(pith_data_ptr(t.get())) % 64, 0u) << n;
    }
}

TEST_F(TensorTest, TinyTensorsKeepTheirDataInlineWithTheStorage)
{
    int64_t one = 1, big = 4096;
    Tensor small(pith_empty(1, &one, PITH_FLOAT32));
    Tensor large(pith_empty(1, &big, PITH_FLOAT32));
    EXPECT_TRUE(shim_storage_inline(small.get()));
    EXPECT_FALSE(shim_storage_inline(large.get()));
}

TEST_F(TensorTest, ZerosAreZeroInEveryDtype)
{
    const int64_t sizes[] = {3, 5};
    for (pith_dtype d : kAllDtypes) {
        Tensor t(pith_zeros(2, sizes, d));
        ASSERT_NE(t, nullptr);
        for (int64_t i = 0; i < 15; i++) {
            double v = -1;
            ASSERT_EQ(pith_item_at(t.get(), i, &v), PITH_OK);
            EXPECT_EQ(v, 0.0) << pith_dtype_name(d) << " at " << i;
        }
    }
}

TEST_F(TensorTest, OnesAreOneInEveryDtype)
{
    const int64_t sizes[] = {4, 33};
    for (pith_dtype d : kAllDtypes) {
        Tensor t(pith_ones(2, sizes, d));
        ASSERT_NE(t, nullptr);
        for (int64_t i = 0; i < 4 * 33; i++) {
            double v = -1;
            ASSERT_EQ(pith_item_at(t.get(), i, &v), PITH_OK);
            ASSERT_EQ(v, 1.0) << pith_dtype_name(d) << " at " << i;
        }
    }
}

TEST_F(TensorTest, FullStoresTheValueConvertedToTheDtype)
{
    int64_t n = 5;
    struct Case {
        pith_dtype dtype;
        double value, expect;
    } cases[] = {
        {PITH_FLOAT64, 0.1, 0.1},
        {PITH_FLOAT32, 0.1, (double)0.1f},
        {PITH_FLOAT16, 0.1, (double)shim_ref_half_to_float(shim_ref_float_to_half(0.1f))},
        {PITH_BFLOAT16, 3.0, 3.0},
        {PITH_INT8, -3, -3},
        {PITH_INT32, 1.75, 1}, /* truncation toward zero is allowed, as in PyTorch */
        {PITH_INT32, -1.75, -1},
        {PITH_UINT8, 255, 255},
        {PITH_INT64, -9e15, -9e15},
        {PITH_BOOL, 0.5, 1},
        {PITH_BOOL, 0.0, 0},
    };
    for (const Case &c : cases) {
        Tensor t(pith_full(1, &n, c.value, c.dtype));
        ASSERT_NE(t, nullptr) << pith_last_error();
        for (int64_t i = 0; i < n; i++) {
            double v;
            ASSERT_EQ(pith_item_at(t.get(), i, &v), PITH_OK);
            EXPECT_EQ(v, c.expect) << pith_dtype_name(c.dtype) << " " << c.value;
        }
    }
}

TEST_F(TensorTest, FullRejectsValuesThatOverflowTheDtype)
{
    int64_t n = 2;
    EXPECT_EQ(pith_full(1, &n, 300, PITH_INT8), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "value 300 cannot be converted to type int8"));
    EXPECT_EQ(pith_full(1, &n, -1, PITH_UINT8), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "cannot be converted to type uint8"));
    EXPECT_EQ(pith_full(1, &n, NAN, PITH_INT32), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "int32 without overflow"));
    EXPECT_EQ(pith_full(1, &n, 1e6, PITH_FLOAT16), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "float16"));
    EXPECT_EQ(pith_full(1, &n, 1e300, PITH_FLOAT32), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "float32"));
    EXPECT_EQ(pith_ones(1, &n, (pith_dtype)99), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "invalid dtype 99"));
}

TEST_F(TensorTest, FullAcceptsInfinityAndNanInFloatingDtypes)
{
    int64_t n = 1;
    Tensor a(pith_full(1, &n, INFINITY, PITH_FLOAT16));
    Tensor b(pith_full(1, &n, NAN, PITH_BFLOAT16));
    double va, vb;
    ASSERT_EQ(pith_item(a.get(), &va), PITH_OK);
    ASSERT_EQ(pith_item(b.get(), &vb), PITH_OK);
    EXPECT_EQ(va, INFINITY);
    EXPECT_TRUE(std::isnan(vb));
}

TEST_F(TensorTest, ScalarTensorIsZeroDimWithOneElement)
{
    Tensor t(pith_scalar_tensor(-2.5, PITH_FLOAT64));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(pith_ndim(t.get()), 0);
    EXPECT_EQ(pith_numel(t.get()), 1);
    int64_t sizes[PITH_MAX_DIMS];
    EXPECT_EQ(pith_sizes(t.get(), sizes), 0);
    double v;
    ASSERT_EQ(pith_item(t.get(), &v), PITH_OK);
    EXPECT_EQ(v, -2.5);
}

TEST_F(TensorTest, FromDataCopiesTheValues)
{
    int32_t src[] = {1, -2, 3, 4, 5, 6};
    const int64_t sizes[] = {3, 2};
    Tensor t(pith_from_data(src, 2, sizes, PITH_INT32));
    ASSERT_NE(t, nullptr);
    src[0] = 100;
    EXPECT_NE(pith_data_ptr(t.get()), static_cast<void *>(src));
    double v;
    ASSERT_EQ(pith_item_at(t.get(), 0, &v), PITH_OK);
    EXPECT_EQ(v, 1.0);
    ASSERT_EQ(pith_item_at(t.get(), 1, &v), PITH_OK);
    EXPECT_EQ(v, -2.0);
    ASSERT_EQ(pith_item_at(t.get(), 5, &v), PITH_OK);
    EXPECT_EQ(v, 6.0);
}

TEST_F(TensorTest, FromDataRejectsNullDataButAcceptsItForEmptyTensors)
{
    int64_t n = 3, zero = 0;
    EXPECT_EQ(pith_from_data(nullptr, 1, &n, PITH_FLOAT32), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "from_data: data is NULL"));
    Tensor t(pith_from_data(nullptr, 1, &zero, PITH_FLOAT32));
    EXPECT_NE(t, nullptr);
}

TEST_F(TensorTest, EmptyTensorsHaveNoDataAndAreContiguous)
{
    const int64_t sizes[] = {0, 3};
    Tensor t(pith_empty(2, sizes, PITH_FLOAT32));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(pith_numel(t.get()), 0);
    EXPECT_EQ(pith_data_ptr(t.get()), nullptr);
    EXPECT_TRUE(pith_is_contiguous(t.get()));
    EXPECT_EQ(pith_stride(t.get(), 0), 3);
}

/* ---- validation ---- */

TEST_F(TensorTest, NegativeSizeIsValueError)
{
    const int64_t sizes[] = {2, -1};
    EXPECT_EQ(pith_empty(2, sizes, PITH_FLOAT32), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative dimension -1: [2, -1]"));
    EXPECT_EQ(pith_zeros(2, sizes, PITH_FLOAT32), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative dimension"));
}

TEST_F(TensorTest, NumelOverflowingInt64IsValueError)
{
    const int64_t sizes[] = {INT64_C(1) << 32, INT64_C(1) << 32};
    EXPECT_EQ(pith_empty(2, sizes, PITH_UINT8), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "overflows int64"));
    /* Meta tensors allocate nothing, yet the same check applies. */
    EXPECT_EQ(pith_empty_strided(2, sizes, nullptr, PITH_UINT8, PITH_META), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "overflows int64"));
}

TEST_F(TensorTest, ByteSizeOverflowIsValueError)
{
    const int64_t sizes[] = {INT64_C(1) << 62};
    EXPECT_EQ(pith_empty_strided(1, sizes, nullptr, PITH_FLOAT64, PITH_META), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "overflow the byte size"));
}

TEST_F(TensorTest, ZeroSizeMakesAHugeOtherSizeHarmless)
{
    /* Strides of empty shapes still count: See Note [Geometry fits in int64]
     * (test_geometry.cc). */
    const int64_t sizes[] = {INT64_MAX, 0};
    Tensor t(pith_empty(2, sizes, PITH_UINT8));
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(pith_numel(t.get()), 0);
}

TEST_F(TensorTest, NdimOutOfRangeIsValueError)
{
    int64_t sizes[PITH_MAX_DIMS + 1];
    for (auto &s : sizes)
        s = 1;
    EXPECT_EQ(pith_empty(PITH_MAX_DIMS + 1, sizes, PITH_FLOAT32), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "ndim 17 is out of range [0, 16]"));
    EXPECT_EQ(pith_empty(-1, sizes, PITH_FLOAT32), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "ndim -1 is out of range"));
    Tensor t(pith_empty(PITH_MAX_DIMS, sizes, PITH_FLOAT32));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(pith_ndim(t.get()), PITH_MAX_DIMS);
}

TEST_F(TensorTest, NullSizesIsValueErrorWhenNdimIsPositive)
{
    EXPECT_EQ(pith_empty(2, nullptr, PITH_FLOAT32), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "sizes is NULL"));
    Tensor t(pith_empty(0, nullptr, PITH_FLOAT32));
    EXPECT_NE(t, nullptr);
}

TEST_F(TensorTest, InvalidDtypeIsTypeError)
{
    int64_t n = 2;
    EXPECT_EQ(pith_empty(1, &n, (pith_dtype)42), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "invalid dtype 42"));
    EXPECT_EQ(pith_empty(1, &n, (pith_dtype)-1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "invalid dtype -1"));
}

TEST_F(TensorTest, InvalidDeviceIsValueError)
{
    int64_t n = 2;
    EXPECT_EQ(pith_empty_strided(1, &n, nullptr, PITH_FLOAT32, (pith_device)7), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "invalid device 7"));
}

TEST_F(TensorTest, NegativeStridesAreRejected)
{
    const int64_t sizes[] = {2, 3}, strides[] = {3, -1};
    EXPECT_EQ(pith_empty_strided(2, sizes, strides, PITH_FLOAT32, PITH_CPU), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative strides are not supported: [3, -1]"));
}

TEST_F(TensorTest, StridesSpanningMoreThanInt64AreRejected)
{
    const int64_t sizes[] = {3}, strides[] = {INT64_MAX / 2 + 1};
    EXPECT_EQ(pith_empty_strided(1, sizes, strides, PITH_UINT8, PITH_META), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "overflow the storage size"));
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/* Sanitizer allocators abort on impossible sizes instead of returning NULL. */
TEST_F(TensorTest, ImpossibleAllocationIsNomem)
{
    int64_t n = INT64_C(1) << 60;
    EXPECT_EQ(pith_empty(1, &n, PITH_UINT8), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_NOMEM, "bytes"));
}
#endif

TEST_F(TensorTest, SuccessLeavesAnEarlierErrorInPlace)
{
    pith_set_error(PITH_ERR_INDEX, "earlier");
    int64_t n = 2;
    Tensor t(pith_ones(1, &n, PITH_FLOAT32));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(pith_numel(t.get()), 2);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "earlier"));
}

/* ---- strided, meta ---- */

TEST_F(TensorTest, EmptyStridedKeepsStridesAndSizesItsStorage)
{
    const int64_t sizes[] = {2, 3}, strides[] = {1, 2};
    Tensor t(pith_empty_strided(2, sizes, strides, PITH_FLOAT32, PITH_CPU));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(pith_stride(t.get(), 0), 1);
    EXPECT_EQ(pith_stride(t.get(), 1), 2);
    EXPECT_FALSE(pith_is_contiguous(t.get()));
    /* the last element is at 1*1 + 2*2 = 5: six elements */
    EXPECT_EQ(shim_storage_nbytes(t.get()), 6 * sizeof(float));
}

TEST_F(TensorTest, SizeOneDimsMayHaveAnyStrideAndStayContiguous)
{
    const int64_t sizes[] = {2, 1, 3}, strides[] = {3, 100, 1};
    Tensor t(pith_empty_strided(3, sizes, strides, PITH_FLOAT32, PITH_CPU));
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(pith_is_contiguous(t.get()));
}

TEST_F(TensorTest, MetaTensorsHaveGeometryButNoData)
{
    const int64_t sizes[] = {1000, 1000};
    Tensor t(pith_empty_strided(2, sizes, nullptr, PITH_FLOAT64, PITH_META));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(pith_tensor_device(t.get()), PITH_META);
    EXPECT_EQ(pith_data_ptr(t.get()), nullptr);
    EXPECT_EQ(pith_numel(t.get()), 1000000);
    EXPECT_EQ(shim_storage_nbytes(t.get()), 8000000u);
    EXPECT_EQ(shim_keys(t.get()), shim_key_meta());
    double v;
    EXPECT_EQ(pith_item_at(t.get(), 0, &v), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "meta tensor"));
}

/* ---- from_blob ---- */

struct DeleterLog {
    int calls = 0;
    void *data = nullptr;
};
void log_deleter(void *data, void *ctx)
{
    auto *log = static_cast<DeleterLog *>(ctx);
    log->calls++;
    log->data = data;
}

TEST_F(TensorTest, FromBlobDoesNotCopy)
{
    float buf[6] = {0, 1, 2, 3, 4, 5};
    const int64_t sizes[] = {2, 3};
    Tensor t(pith_from_blob(buf, 2, sizes, nullptr, PITH_FLOAT32, nullptr, nullptr));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(pith_data_ptr(t.get()), static_cast<void *>(buf));
    buf[4] = 42;
    double v;
    ASSERT_EQ(pith_item_at(t.get(), 4, &v), PITH_OK);
    EXPECT_EQ(v, 42.0);
}

TEST_F(TensorTest, FromBlobDeleterRunsOnceWhenTheLastViewDies)
{
    DeleterLog log;
    float buf[6] = {};
    const int64_t sizes[] = {2, 3};
    pith_tensor *base = pith_from_blob(buf, 2, sizes, nullptr, PITH_FLOAT32, log_deleter, &log);
    ASSERT_NE(base, nullptr);
    const int64_t vs[] = {3}, vst[] = {2};
    pith_tensor *view = shim_tensor_view(base, 1, vs, vst, 1);
    ASSERT_NE(view, nullptr);
    pith_release(base);
    EXPECT_EQ(log.calls, 0);
    pith_release(view);
    EXPECT_EQ(log.calls, 1);
    EXPECT_EQ(log.data, static_cast<void *>(buf));
}

TEST_F(TensorTest, FromBlobReadsWithTheGivenStrides)
{
    double buf[6] = {0, 1, 2, 3, 4, 5};
    const int64_t sizes[] = {3, 2}, strides[] = {1, 3}; /* the transpose of a 2x3 */
    Tensor t(pith_from_blob(buf, 2, sizes, strides, PITH_FLOAT64, nullptr, nullptr));
    ASSERT_NE(t, nullptr);
    EXPECT_FALSE(pith_is_contiguous(t.get()));
    const double expect[] = {0, 3, 1, 4, 2, 5};
    for (int i = 0; i < 6; i++) {
        double v;
        ASSERT_EQ(pith_item_at(t.get(), i, &v), PITH_OK);
        EXPECT_EQ(v, expect[i]) << i;
    }
}

TEST_F(TensorTest, FromBlobFailureLeavesTheDataWithTheCaller)
{
    DeleterLog log;
    float buf[4];
    int64_t bad = -4;
    EXPECT_EQ(pith_from_blob(buf, 1, &bad, nullptr, PITH_FLOAT32, log_deleter, &log), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative dimension"));
    EXPECT_EQ(log.calls, 0);
}

TEST_F(TensorTest, FromBlobRejectsNullAndMisalignedData)
{
    int64_t n = 2;
    EXPECT_EQ(pith_from_blob(nullptr, 1, &n, nullptr, PITH_FLOAT32, nullptr, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "from_blob: data is NULL"));
    alignas(8) char buf[16];
    EXPECT_EQ(pith_from_blob(buf + 1, 1, &n, nullptr, PITH_FLOAT32, nullptr, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "not aligned to 4-byte float32 elements"));
    const int64_t strides[] = {-1};
    EXPECT_EQ(pith_from_blob(buf, 1, &n, strides, PITH_UINT8, nullptr, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative strides"));
}

/* ---- views ---- */

TEST_F(TensorTest, ViewsShareStorageAndTheVersionCounter)
{
    const int64_t sizes[] = {4, 4};
    Tensor base(pith_zeros(2, sizes, PITH_FLOAT32));
    const int64_t vs[] = {4}, vst[] = {4};
    Tensor view(shim_tensor_view(base.get(), 1, vs, vst, 1)); /* column 1 */
    ASSERT_NE(view, nullptr);
    EXPECT_TRUE(pith_shares_storage(base.get(), view.get()));
    EXPECT_EQ(shim_storage_refcount(base.get()), 2);
    EXPECT_EQ(pith_storage_offset(view.get()), 1);
    EXPECT_EQ(static_cast<char *>(pith_data_ptr(view.get())),
              static_cast<char *>(pith_data_ptr(base.get())) + sizeof(float));
    EXPECT_FALSE(pith_is_contiguous(view.get()));
    int64_t v0 = pith_version_counter(base.get());
    shim_bump_version(view.get());
    EXPECT_EQ(pith_version_counter(base.get()), v0 + 1);
    EXPECT_EQ(pith_version_counter(view.get()), v0 + 1);
    /* A write through the base is visible through the view. */
    static_cast<float *>(pith_data_ptr(base.get()))[1 + 2 * 4] = 9.0f;
    double v;
    ASSERT_EQ(pith_item_at(view.get(), 2, &v), PITH_OK);
    EXPECT_EQ(v, 9.0);
}

TEST_F(TensorTest, AViewOutlivesTheSmallTensorItViews)
{
    /* A small tensor keeps its data in its own block; the view must keep it alive. */
    float data[] = {1, 2, 3, 4};
    int64_t n = 4;
    pith_tensor *base = pith_from_data(data, 1, &n, PITH_FLOAT32);
    ASSERT_TRUE(shim_storage_inline(base));
    const int64_t two = 2, step = 2;
    Tensor view(shim_tensor_view(base, 1, &two, &step, 1));
    pith_release(base);
    for (pith_tensor *t : {pith_empty(1, &n, PITH_FLOAT32), pith_ones(1, &n, PITH_FLOAT32)})
        pith_release(t); /* reuse freed blocks: they must not be the base's */
    double v;
    ASSERT_EQ(pith_item_at(view.get(), 0, &v), PITH_OK);
    EXPECT_EQ(v, 2.0);
    ASSERT_EQ(pith_item_at(view.get(), 1, &v), PITH_OK);
    EXPECT_EQ(v, 4.0);
    EXPECT_EQ(shim_storage_refcount(view.get()), 1);
}

TEST_F(TensorTest, TensorsMayBeFreedOnAnotherThread)
{
    int64_t n = 3;
    std::vector<pith_tensor *> made;
    std::thread maker([&] {
        for (int i = 0; i < 100; i++)
            made.push_back(pith_ones(1, &n, PITH_INT32));
    });
    maker.join(); /* the maker thread has exited: its cached blocks are gone */
    std::thread releaser([&] {
        for (pith_tensor *t : made)
            pith_release(t);
    });
    releaser.join();
    EXPECT_EQ(pith_live_tensors(), live_before_);
}

TEST_F(TensorTest, IndependentTensorsDoNotShareStorage)
{
    int64_t n = 2;
    Tensor a(pith_zeros(1, &n, PITH_FLOAT32)), b(pith_zeros(1, &n, PITH_FLOAT32));
    EXPECT_FALSE(pith_shares_storage(a.get(), b.get()));
}

TEST_F(TensorTest, ViewsDropThePythonKeyAndTheTag)
{
    int64_t n = 4;
    Tensor base(pith_zeros(1, &n, PITH_FLOAT32));
    pith_tensor_set_python_key(base.get(), true);
    Tensor view(shim_tensor_view(base.get(), 1, &n, nullptr, 0));
    EXPECT_FALSE(pith_tensor_has_python_key(view.get()));
    EXPECT_EQ(shim_keys(view.get()), shim_key_cpu());
    EXPECT_EQ(pith_tensor_interpreter(view.get()), nullptr);
}

TEST_F(TensorTest, FromStorageChecksTheGeometryFitsTheStorage)
{
    int64_t n = 4;
    Tensor base(pith_zeros(1, &n, PITH_FLOAT32));
    const int64_t two = 2;
    Tensor ok(shim_tensor_from_storage_of(base.get(), 1, &two, nullptr, 2, PITH_FLOAT32));
    EXPECT_NE(ok, nullptr);
    EXPECT_EQ(shim_tensor_from_storage_of(base.get(), 1, &two, nullptr, 3, PITH_FLOAT32),
              nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "needs 20 bytes but the storage has 16"));
    EXPECT_EQ(shim_tensor_from_storage_of(base.get(), 1, &two, nullptr, -1, PITH_FLOAT32),
              nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative storage offset -1"));
    /* Reinterpreting 16 bytes as two float64 fits. */
    Tensor wide(shim_tensor_from_storage_of(base.get(), 1, &two, nullptr, 0, PITH_FLOAT64));
    EXPECT_NE(wide, nullptr);
}

TEST_F(TensorTest, ResizeOutResizesOnlyEmptyOutputs)
{
    int64_t zero = 0;
    const int64_t want[] = {2, 3};
    Tensor out(pith_empty(1, &zero, PITH_FLOAT32));
    shim_bump_version(out.get());
    ASSERT_EQ(shim_tensor_resize_out(out.get(), 2, want), PITH_OK);
    EXPECT_EQ(pith_numel(out.get()), 6);
    EXPECT_EQ(pith_stride(out.get(), 0), 3);
    EXPECT_EQ(pith_version_counter(out.get()), 1);
    EXPECT_EQ(shim_storage_nbytes(out.get()), 24u);
    EXPECT_EQ(shim_tensor_resize_out(out.get(), 2, want), PITH_OK); /* already matches */
    const int64_t other[] = {3, 2};
    EXPECT_EQ(shim_tensor_resize_out(out.get(), 2, other), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "out= tensor has shape [2, 3] but the result has "
                                         "shape [3, 2]"));
}

/* ---- metadata ---- */

TEST_F(TensorTest, NegativeDimsCountFromTheEnd)
{
    const int64_t sizes[] = {2, 3, 4};
    Tensor t(pith_empty(3, sizes, PITH_FLOAT32));
    EXPECT_EQ(pith_size(t.get(), -1), 4);
    EXPECT_EQ(pith_size(t.get(), -3), 2);
    EXPECT_EQ(pith_stride(t.get(), -2), 4);
}

TEST_F(TensorTest, DimOutOfRangeIsIndexError)
{
    const int64_t sizes[] = {2, 3};
    Tensor t(pith_empty(2, sizes, PITH_FLOAT32));
    EXPECT_EQ(pith_size(t.get(), 2), -1);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "expected to be in range of [-2, 1], but got 2"));
    EXPECT_EQ(pith_stride(t.get(), -3), -1);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "but got -3"));
    Tensor s(pith_scalar_tensor(1, PITH_FLOAT32));
    EXPECT_EQ(pith_size(s.get(), 0), -1);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "tensor has no dimensions"));
}

TEST_F(TensorTest, SizesAndStridesCopyOut)
{
    const int64_t sizes[] = {5, 1, 2};
    Tensor t(pith_empty(3, sizes, PITH_INT16));
    int64_t got[PITH_MAX_DIMS], st[PITH_MAX_DIMS];
    ASSERT_EQ(pith_sizes(t.get(), got), 3);
    ASSERT_EQ(pith_strides(t.get(), st), 3);
    EXPECT_EQ(std::vector<int64_t>(got, got + 3), std::vector<int64_t>({5, 1, 2}));
    EXPECT_EQ(std::vector<int64_t>(st, st + 3), std::vector<int64_t>({2, 2, 1}));
    EXPECT_EQ(pith_sizes(t.get(), nullptr), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "sizes: out is NULL"));
    EXPECT_EQ(pith_strides(t.get(), nullptr), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "strides: out is NULL"));
}

TEST_F(TensorTest, NullTensorGivesSentinelsAndValueErrors)
{
    int64_t buf[PITH_MAX_DIMS];
    double v;
    EXPECT_EQ(pith_ndim(nullptr), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "ndim: tensor is NULL"));
    EXPECT_EQ(pith_size(nullptr, 0), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "size: tensor is NULL"));
    EXPECT_EQ(pith_stride(nullptr, 0), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "stride: tensor is NULL"));
    EXPECT_EQ(pith_numel(nullptr), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "numel: tensor is NULL"));
    EXPECT_EQ(pith_tensor_dtype(nullptr), PITH_FLOAT32);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "dtype: tensor is NULL"));
    EXPECT_EQ(pith_tensor_device(nullptr), PITH_CPU);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "device: tensor is NULL"));
    EXPECT_EQ(pith_data_ptr(nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "data_ptr: tensor is NULL"));
    EXPECT_FALSE(pith_is_contiguous(nullptr));
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "is_contiguous: tensor is NULL"));
    EXPECT_EQ(pith_storage_offset(nullptr), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "storage_offset: tensor is NULL"));
    EXPECT_EQ(pith_version_counter(nullptr), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "version_counter: tensor is NULL"));
    EXPECT_FALSE(pith_shares_storage(nullptr, nullptr));
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "shares_storage: tensor is NULL"));
    EXPECT_EQ(pith_sizes(nullptr, buf), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "sizes: tensor is NULL"));
    EXPECT_EQ(pith_strides(nullptr, buf), -1);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "strides: tensor is NULL"));
    EXPECT_EQ(pith_item(nullptr, &v), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "item: tensor is NULL"));
    EXPECT_EQ(pith_item_at(nullptr, 0, &v), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "item: tensor is NULL"));
}

TEST_F(TensorTest, RetainAndReleaseCountReferences)
{
    int64_t n = 1;
    pith_tensor *t = pith_empty(1, &n, PITH_FLOAT32);
    EXPECT_EQ(pith_live_tensors(), live_before_ + 1);
    EXPECT_EQ(pith_tensor_refcount(t), 1);
    pith_retain(t);
    EXPECT_EQ(pith_tensor_refcount(t), 2);
    pith_release(t);
    EXPECT_EQ(pith_live_tensors(), live_before_ + 1);
    pith_release(t);
    EXPECT_EQ(pith_live_tensors(), live_before_);
    pith_retain(nullptr);
    pith_release(nullptr);
    EXPECT_EQ(pith_last_status(), PITH_OK);
}

/* ---- element reads ---- */

TEST_F(TensorTest, ItemAtReadsEveryDtype)
{
    int64_t n = 3;
    {
        bool d[] = {true, false, true};
        Tensor t(pith_from_data(d, 1, &n, PITH_BOOL));
        double v;
        ASSERT_EQ(pith_item_at(t.get(), 1, &v), PITH_OK);
        EXPECT_EQ(v, 0.0);
        ASSERT_EQ(pith_item_at(t.get(), 2, &v), PITH_OK);
        EXPECT_EQ(v, 1.0);
    }
    auto check = [&](const void *data, pith_dtype dtype, const double *expect) {
        Tensor t(pith_from_data(data, 1, &n, dtype));
        ASSERT_NE(t, nullptr);
        for (int i = 0; i < 3; i++) {
            double v;
            ASSERT_EQ(pith_item_at(t.get(), i, &v), PITH_OK);
            EXPECT_EQ(v, expect[i]) << pith_dtype_name(dtype) << " " << i;
        }
    };
    uint8_t u8[] = {0, 200, 255};
    const double e_u8[] = {0, 200, 255};
    check(u8, PITH_UINT8, e_u8);
    int8_t i8[] = {-128, 5, 127};
    const double e_i8[] = {-128, 5, 127};
    check(i8, PITH_INT8, e_i8);
    int16_t i16[] = {-32768, 300, 32767};
    const double e_i16[] = {-32768, 300, 32767};
    check(i16, PITH_INT16, e_i16);
    int32_t i32[] = {INT32_MIN, -7, INT32_MAX};
    const double e_i32[] = {(double)INT32_MIN, -7, (double)INT32_MAX};
    check(i32, PITH_INT32, e_i32);
    int64_t i64[] = {-(INT64_C(1) << 53), 9, INT64_C(1) << 53};
    const double e_i64[] = {-9007199254740992.0, 9, 9007199254740992.0};
    check(i64, PITH_INT64, e_i64);
    float f32[] = {-0.5f, 1e-30f, 3.25f};
    const double e_f32[] = {-0.5, (double)1e-30f, 3.25};
    check(f32, PITH_FLOAT32, e_f32);
    double f64[] = {-0.1, 1e300, 2.0};
    check(f64, PITH_FLOAT64, f64);
}

TEST_F(TensorTest, HalfAndBfloat16RoundTripThroughItem)
{
    const float values[] = {1.5f, -0.099975586f, 65504.0f, 5.9604645e-08f /* 2^-24 */};
    for (float f : values) {
        uint16_t h = shim_ref_float_to_half(f);
        int64_t one = 1;
        Tensor t(pith_from_data(&h, 1, &one, PITH_FLOAT16));
        double v;
        ASSERT_EQ(pith_item(t.get(), &v), PITH_OK);
        EXPECT_EQ(v, (double)shim_ref_half_to_float(h)) << f;
        /* and back through full(): the same bits */
        Tensor u(pith_full(1, &one, v, PITH_FLOAT16));
        EXPECT_EQ(*static_cast<uint16_t *>(pith_data_ptr(u.get())), h);
    }
    const uint16_t bf[] = {0x3fc0 /* 1.5 */, 0xc2f7, 0x0001 /* subnormal */, 0x7f7f};
    for (uint16_t b : bf) {
        int64_t one = 1;
        Tensor t(pith_from_data(&b, 1, &one, PITH_BFLOAT16));
        double v;
        ASSERT_EQ(pith_item(t.get(), &v), PITH_OK);
        uint32_t bits = (uint32_t)b << 16;
        float expect;
        std::memcpy(&expect, &bits, sizeof expect);
        EXPECT_EQ(v, (double)expect);
        Tensor u(pith_full(1, &one, v, PITH_BFLOAT16));
        EXPECT_EQ(*static_cast<uint16_t *>(pith_data_ptr(u.get())), b);
    }
}

TEST_F(TensorTest, ItemAtFollowsLogicalRowMajorOrderOfAView)
{
    const int64_t sizes[] = {2, 3};
    int32_t data[] = {0, 1, 2, 10, 11, 12};
    Tensor base(pith_from_data(data, 2, sizes, PITH_INT32));
    const int64_t ts[] = {3, 2}, tst[] = {1, 3};
    Tensor t(shim_tensor_view(base.get(), 2, ts, tst, 0));
    const double expect[] = {0, 10, 1, 11, 2, 12};
    for (int i = 0; i < 6; i++) {
        double v;
        ASSERT_EQ(pith_item_at(t.get(), i, &v), PITH_OK);
        EXPECT_EQ(v, expect[i]);
    }
}

TEST_F(TensorTest, ItemErrors)
{
    const int64_t sizes[] = {2, 3};
    Tensor t(pith_zeros(2, sizes, PITH_FLOAT32));
    double v;
    EXPECT_EQ(pith_item(t.get(), &v), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "a Tensor with 6 elements cannot be converted to Scalar"));
    EXPECT_EQ(pith_item_at(t.get(), 6, &v), PITH_ERR_INDEX);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index 6 is out of bounds for a tensor with 6 elements"));
    EXPECT_EQ(pith_item_at(t.get(), -1, &v), PITH_ERR_INDEX);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index -1 is out of bounds"));
    EXPECT_EQ(pith_item_at(t.get(), 0, nullptr), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "item: out is NULL"));
}

/* ---- helpers ---- */

TEST_F(TensorTest, DimWrapAcceptsNegativeDimsAndZeroDimTensors)
{
    EXPECT_EQ(shim_dim_wrap(-1, 3), 2);
    EXPECT_EQ(shim_dim_wrap(2, 3), 2);
    EXPECT_EQ(shim_dim_wrap(0, 0), 0);
    EXPECT_EQ(shim_dim_wrap(-1, 0), 0);
    EXPECT_EQ(shim_dim_wrap(3, 3), -1);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "expected to be in range of [-3, 2], but got 3"));
    EXPECT_EQ(shim_dim_wrap(1, 0), -1);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "[-1, 0], but got 1"));
    EXPECT_EQ(shim_dim_wrap(INT64_MIN, 3), -1);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "but got -9223372036854775808"));
}

TEST_F(TensorTest, ShapeFormatTruncatesSafely)
{
    const int64_t sizes[] = {2, 30, 4};
    char buf[64];
    EXPECT_STREQ(shim_shape_format(3, sizes, buf, sizeof buf), "[2, 30, 4]");
    EXPECT_STREQ(shim_shape_format(0, nullptr, buf, sizeof buf), "[]");
    char tiny[5];
    EXPECT_STREQ(shim_shape_format(3, sizes, tiny, sizeof tiny), "[2, ");
}

TEST_F(TensorTest, VersionStringMatchesTheMacros)
{
    std::string expect = std::to_string(PITH_VERSION_MAJOR) + "." +
                         std::to_string(PITH_VERSION_MINOR) + "." +
                         std::to_string(PITH_VERSION_PATCH);
    EXPECT_EQ(std::string(pith_version()), expect);
}

} // namespace
