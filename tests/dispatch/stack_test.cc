// stack_test.cc — the public pith_stack API: every push and get, ownership, errors.
#include <cstring>
#include <string>

#include "test_util.h"

namespace {

using Stack = DispatchTest;

TEST_F(Stack, NewStackIsEmpty)
{
    StackPtr s;
    ASSERT_NE(s.s, nullptr);
    EXPECT_EQ(pith_stack_size(s), 0u);
}

TEST_F(Stack, FreeNullIsANoOp)
{
    pith_stack_free(nullptr);
    EXPECT_EQ(pith_last_status(), PITH_OK);
}

TEST_F(Stack, IntRoundTrip)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_int(s, -42), PITH_OK);
    ASSERT_EQ(pith_stack_push_int(s, INT64_MIN), PITH_OK);
    EXPECT_EQ(pith_stack_size(s), 2u);
    EXPECT_EQ(pith_stack_kind(s, 0), PITH_VALUE_INT);
    EXPECT_EQ(pith_stack_get_int(s, 0), -42);
    EXPECT_EQ(pith_stack_get_int(s, 1), INT64_MIN);
}

TEST_F(Stack, DoubleRoundTrip)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_double(s, 2.5), PITH_OK);
    EXPECT_EQ(pith_stack_kind(s, 0), PITH_VALUE_DOUBLE);
    EXPECT_EQ(pith_stack_get_double(s, 0), 2.5);
}

TEST_F(Stack, GetDoubleAcceptsAnInt)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_int(s, 7), PITH_OK);
    EXPECT_EQ(pith_stack_get_double(s, 0), 7.0);
    EXPECT_EQ(pith_last_status(), PITH_OK);
}

TEST_F(Stack, BoolRoundTrip)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_bool(s, true), PITH_OK);
    ASSERT_EQ(pith_stack_push_bool(s, false), PITH_OK);
    EXPECT_EQ(pith_stack_kind(s, 0), PITH_VALUE_BOOL);
    EXPECT_TRUE(pith_stack_get_bool(s, 0));
    EXPECT_FALSE(pith_stack_get_bool(s, 1));
}

TEST_F(Stack, NoneHasKindNone)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_none(s), PITH_OK);
    EXPECT_EQ(pith_stack_size(s), 1u);
    EXPECT_EQ(pith_stack_kind(s, 0), PITH_VALUE_NONE);
    EXPECT_EQ(pith_last_status(), PITH_OK);
}

TEST_F(Stack, StringIsCopied)
{
    StackPtr s;
    char buf[] = "tanh";
    ASSERT_EQ(pith_stack_push_string(s, buf), PITH_OK);
    buf[0] = 'X';
    EXPECT_EQ(pith_stack_kind(s, 0), PITH_VALUE_STRING);
    EXPECT_STREQ(pith_stack_get_string(s, 0), "tanh");
}

TEST_F(Stack, EmptyString)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_string(s, ""), PITH_OK);
    EXPECT_STREQ(pith_stack_get_string(s, 0), "");
}

TEST_F(Stack, IntListIsCopied)
{
    StackPtr s;
    int64_t values[3] = {1, -2, 3};
    ASSERT_EQ(pith_stack_push_int_list(s, values, 3), PITH_OK);
    values[0] = 100;
    size_t n = 0;
    const int64_t *got = pith_stack_get_int_list(s, 0, &n);
    ASSERT_NE(got, nullptr);
    ASSERT_EQ(n, 3u);
    EXPECT_EQ(got[0], 1);
    EXPECT_EQ(got[1], -2);
    EXPECT_EQ(got[2], 3);
    EXPECT_EQ(pith_stack_kind(s, 0), PITH_VALUE_INT_LIST);
}

TEST_F(Stack, EmptyIntList)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_int_list(s, nullptr, 0), PITH_OK);
    size_t n = 99;
    EXPECT_NE(pith_stack_get_int_list(s, 0, &n), nullptr); // NULL means error
    EXPECT_EQ(n, 0u);
}

TEST_F(Stack, IntListNullDataIsAnError)
{
    StackPtr s;
    EXPECT_EQ(pith_stack_push_int_list(s, nullptr, 2), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "data is NULL");
    EXPECT_EQ(pith_stack_size(s), 0u);
}

TEST_F(Stack, TensorIsRetainedAndGetReturnsANewReference)
{
    TensorPtr t(make_tensor({1, 2}));
    int64_t before = pith_tensor_refcount(t);
    {
        StackPtr s;
        ASSERT_EQ(pith_stack_push_tensor(s, t), PITH_OK);
        EXPECT_EQ(pith_tensor_refcount(t), before + 1);
        EXPECT_EQ(pith_stack_kind(s, 0), PITH_VALUE_TENSOR);
        pith_tensor *got = pith_stack_get_tensor(s, 0);
        EXPECT_EQ(got, t.get());
        EXPECT_EQ(pith_tensor_refcount(t), before + 2);
        pith_release(got);
    }
    EXPECT_EQ(pith_tensor_refcount(t), before);
}

TEST_F(Stack, TensorStealTakesTheReference)
{
    pith_tensor *t = make_tensor({1});
    size_t live = pith_live_tensors();
    {
        StackPtr s;
        ASSERT_EQ(pith_stack_push_tensor_steal(s, t), PITH_OK);
        EXPECT_EQ(pith_tensor_refcount(t), 1);
    }
    EXPECT_EQ(pith_live_tensors(), live - 1);
}

TEST_F(Stack, TensorStealOntoNullStackReleases)
{
    pith_tensor *t = make_tensor({1});
    size_t live = pith_live_tensors();
    EXPECT_EQ(pith_stack_push_tensor_steal(nullptr, t), PITH_ERR_VALUE);
    EXPECT_EQ(pith_live_tensors(), live - 1);
}

TEST_F(Stack, NullTensorIsAnError)
{
    StackPtr s;
    EXPECT_EQ(pith_stack_push_tensor(s, nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "pith_stack_push_none");
    EXPECT_EQ(pith_stack_push_tensor_steal(s, nullptr), PITH_ERR_VALUE);
    EXPECT_EQ(pith_stack_size(s), 0u);
}

TEST_F(Stack, TensorListRetainsEachTensor)
{
    TensorPtr a(make_tensor({1})), b(make_tensor({2, 3}));
    const pith_tensor *list[2] = {a, b};
    {
        StackPtr s;
        ASSERT_EQ(pith_stack_push_tensor_list(s, list, 2), PITH_OK);
        EXPECT_EQ(pith_tensor_refcount(a), 2);
        EXPECT_EQ(pith_tensor_refcount(b), 2);
        size_t n = 0;
        pith_tensor *const *got = pith_stack_get_tensor_list(s, 0, &n);
        ASSERT_NE(got, nullptr);
        ASSERT_EQ(n, 2u);
        EXPECT_EQ(got[0], a.get());
        EXPECT_EQ(got[1], b.get());
        EXPECT_EQ(pith_stack_kind(s, 0), PITH_VALUE_TENSOR_LIST);
    }
    EXPECT_EQ(pith_tensor_refcount(a), 1);
    EXPECT_EQ(pith_tensor_refcount(b), 1);
}

TEST_F(Stack, EmptyTensorList)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_tensor_list(s, nullptr, 0), PITH_OK);
    size_t n = 99;
    EXPECT_NE(pith_stack_get_tensor_list(s, 0, &n), nullptr);
    EXPECT_EQ(n, 0u);
}

// A NULL entry is None (a Tensor?[] argument's); whether it is allowed is checked when the
// value meets its argument (registry_test: BoxedTypes).
TEST_F(Stack, TensorListKeepsNullEntriesAsNone)
{
    TensorPtr a(make_tensor({1}));
    const pith_tensor *list[2] = {nullptr, a};
    {
        StackPtr s;
        ASSERT_EQ(pith_stack_push_tensor_list(s, list, 2), PITH_OK);
        size_t n = 0;
        pith_tensor *const *got = pith_stack_get_tensor_list(s, 0, &n);
        ASSERT_EQ(n, 2u);
        EXPECT_EQ(got[0], nullptr);
        EXPECT_EQ(got[1], a.t);
        EXPECT_EQ(pith_tensor_refcount(a), 2);
    }
    EXPECT_EQ(pith_tensor_refcount(a), 1);
}

TEST_F(Stack, TensorListWithNullDataIsAnError)
{
    StackPtr s;
    EXPECT_EQ(pith_stack_push_tensor_list(s, nullptr, 1), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "data is NULL");
    EXPECT_EQ(pith_stack_size(s), 0u);
}

TEST_F(Stack, DtypeRoundTrip)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_dtype(s, PITH_BFLOAT16), PITH_OK);
    EXPECT_EQ(pith_stack_kind(s, 0), PITH_VALUE_DTYPE);
    EXPECT_EQ(pith_stack_get_dtype(s, 0), PITH_BFLOAT16);
}

TEST_F(Stack, InvalidDtypeIsAnError)
{
    StackPtr s;
    EXPECT_EQ(pith_stack_push_dtype(s, (pith_dtype)PITH_NUM_DTYPES), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "invalid dtype");
    EXPECT_EQ(pith_stack_size(s), 0u);
}

TEST_F(Stack, DeviceHasKindDevice)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_device(s, PITH_META), PITH_OK);
    EXPECT_EQ(pith_stack_kind(s, 0), PITH_VALUE_DEVICE);
    EXPECT_EQ(pith_stack_get_device(s, 0), PITH_META);
    EXPECT_EQ(pith_stack_push_device(s, (pith_device)7), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "invalid device");
    EXPECT_EQ(pith_stack_size(s), 1u);
}

TEST_F(Stack, GetDeviceOfAnotherKindIsATypeError)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_int(s, 0), PITH_OK);
    EXPECT_EQ(pith_stack_get_device(s, 0), PITH_CPU);
    EXPECT_ERROR(PITH_ERR_TYPE, "not Device");
    pith_clear_error();
    EXPECT_EQ(pith_stack_get_device(s, 1), PITH_CPU);
    EXPECT_ERROR(PITH_ERR_INDEX, "out of range");
}

TEST_F(Stack, GetOfTheWrongKindIsATypeError)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_string(s, "x"), PITH_OK);
    EXPECT_EQ(pith_stack_get_int(s, 0), 0);
    EXPECT_ERROR(PITH_ERR_TYPE, "value 0 is str, not int");
    pith_clear_error();
    EXPECT_EQ(pith_stack_get_tensor(s, 0), nullptr);
    EXPECT_ERROR(PITH_ERR_TYPE, "not Tensor");
    pith_clear_error();
    EXPECT_FALSE(pith_stack_get_bool(s, 0));
    EXPECT_ERROR(PITH_ERR_TYPE, "not bool");
    pith_clear_error();
    EXPECT_EQ(pith_stack_get_double(s, 0), 0.0);
    EXPECT_ERROR(PITH_ERR_TYPE, "not float");
    pith_clear_error();
    EXPECT_EQ(pith_stack_get_dtype(s, 0), (pith_dtype)PITH_NUM_DTYPES);
    EXPECT_ERROR(PITH_ERR_TYPE, "not ScalarType");
    pith_clear_error();
    size_t n = 5;
    EXPECT_EQ(pith_stack_get_int_list(s, 0, &n), nullptr);
    EXPECT_EQ(n, 0u);
    EXPECT_ERROR(PITH_ERR_TYPE, "not int[]");
    pith_clear_error();
    EXPECT_EQ(pith_stack_get_tensor_list(s, 0, &n), nullptr);
    EXPECT_ERROR(PITH_ERR_TYPE, "not Tensor[]");
    pith_clear_error();
    ASSERT_EQ(pith_stack_push_int(s, 1), PITH_OK);
    EXPECT_EQ(pith_stack_get_string(s, 1), nullptr);
    EXPECT_ERROR(PITH_ERR_TYPE, "value 1 is int, not str");
}

TEST_F(Stack, GetOutOfRangeIsAnIndexError)
{
    StackPtr s;
    ASSERT_EQ(pith_stack_push_int(s, 1), PITH_OK);
    EXPECT_EQ(pith_stack_get_int(s, 1), 0);
    EXPECT_ERROR(PITH_ERR_INDEX, "index 1 is out of range for a stack of 1 values");
    pith_clear_error();
    EXPECT_EQ(pith_stack_kind(s, 3), PITH_VALUE_NONE);
    EXPECT_ERROR(PITH_ERR_INDEX, "out of range");
}

TEST_F(Stack, NullStackIsAnErrorEverywhere)
{
    EXPECT_EQ(pith_stack_push_int(nullptr, 1), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "the stack is NULL");
    EXPECT_EQ(pith_stack_push_none(nullptr), PITH_ERR_VALUE);
    EXPECT_EQ(pith_stack_push_string(nullptr, "x"), PITH_ERR_VALUE);
    EXPECT_EQ(pith_stack_size(nullptr), 0u);
    EXPECT_EQ(pith_stack_get_tensor(nullptr, 0), nullptr);
    EXPECT_EQ(pith_stack_kind(nullptr, 0), PITH_VALUE_NONE);
    pith_stack_drop(nullptr, 3);
}

TEST_F(Stack, NullStringIsAnError)
{
    StackPtr s;
    EXPECT_EQ(pith_stack_push_string(s, nullptr), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "the string is NULL");
}

TEST_F(Stack, DropRemovesTheTopValues)
{
    StackPtr s;
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(pith_stack_push_int(s, i), PITH_OK);
    pith_stack_drop(s, 2);
    ASSERT_EQ(pith_stack_size(s), 3u);
    EXPECT_EQ(pith_stack_get_int(s, 2), 2);
    pith_stack_drop(s, 0);
    EXPECT_EQ(pith_stack_size(s), 3u);
}

TEST_F(Stack, DropMoreThanSizeEmptiesTheStack)
{
    StackPtr s;
    TensorPtr t(make_tensor({1}));
    ASSERT_EQ(pith_stack_push_tensor(s, t), PITH_OK);
    ASSERT_EQ(pith_stack_push_int(s, 1), PITH_OK);
    pith_stack_drop(s, 10);
    EXPECT_EQ(pith_stack_size(s), 0u);
    EXPECT_EQ(pith_tensor_refcount(t), 1);
}

TEST_F(Stack, ManyPushesGrowTheStack)
{
    StackPtr s;
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(pith_stack_push_int(s, i), PITH_OK);
    ASSERT_EQ(pith_stack_size(s), 1000u);
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(pith_stack_get_int(s, (size_t)i), i);
}

TEST_F(Stack, FreeReleasesEverything)
{
    TensorPtr t(make_tensor({1, 2, 3}));
    pith_stack *s = pith_stack_new();
    const pith_tensor *list[1] = {t};
    int64_t ints[2] = {1, 2};
    ASSERT_EQ(pith_stack_push_tensor(s, t), PITH_OK);
    ASSERT_EQ(pith_stack_push_tensor_list(s, list, 1), PITH_OK);
    ASSERT_EQ(pith_stack_push_string(s, "abc"), PITH_OK);
    ASSERT_EQ(pith_stack_push_int_list(s, ints, 2), PITH_OK);
    EXPECT_EQ(pith_tensor_refcount(t), 3);
    pith_stack_free(s);
    EXPECT_EQ(pith_tensor_refcount(t), 1);
}

} // namespace
