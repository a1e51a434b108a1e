/* dtype names, sizes, categories, promote_types (against PyTorch's table), and the
 * float16 / bfloat16 conversions (against independent references). */
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/oracle_table.h"
#include "core_test.h"

namespace {

class DtypeTest : public CoreTest {};

const pith_dtype kAllDtypes[] = {PITH_BOOL,    PITH_UINT8,    PITH_INT8,    PITH_INT16,
                                 PITH_INT32,   PITH_INT64,    PITH_FLOAT16, PITH_BFLOAT16,
                                 PITH_FLOAT32, PITH_FLOAT64};

TEST_F(DtypeTest, NamesAndSizes)
{
    const char *names[] = {"bool",  "uint8",   "int8",     "int16",   "int32",
                           "int64", "float16", "bfloat16", "float32", "float64"};
    const size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
    for (int i = 0; i < PITH_NUM_DTYPES; i++) {
        EXPECT_STREQ(pith_dtype_name(kAllDtypes[i]), names[i]);
        EXPECT_EQ(pith_dtype_size(kAllDtypes[i]), sizes[i]);
        pith_dtype parsed;
        ASSERT_TRUE(pith_dtype_from_name(names[i], &parsed));
        EXPECT_EQ(parsed, kAllDtypes[i]);
    }
}

std::vector<pith_dtype> DtypeList(const char *list)
{
    pith_dtype out[PITH_NUM_DTYPES];
    int n = shim_dtype_list(list, out);
    return n < 0 ? std::vector<pith_dtype>() : std::vector<pith_dtype>(out, out + n);
}

TEST_F(DtypeTest, TableListsEveryDtypeInEnumOrder)
{
    std::vector<pith_dtype> all(std::begin(kAllDtypes), std::end(kAllDtypes));
    EXPECT_EQ(DtypeList("all"), all);
}

TEST_F(DtypeTest, TableNestedListIsTheList)
{
    EXPECT_EQ(DtypeList("nested"), DtypeList("all"));
}

TEST_F(DtypeTest, TableSubListsAreTheCategories)
{
    std::vector<pith_dtype> integral, signed_integral, floating, reduced;
    for (pith_dtype d : kAllDtypes) {
        if (pith_dtype_is_integral(d, false))
            integral.push_back(d);
        if (pith_dtype_is_integral(d, false) && pith_dtype_is_signed(d))
            signed_integral.push_back(d);
        if (pith_dtype_is_floating(d))
            floating.push_back(d);
        if (pith_dtype_is_floating(d) && pith_dtype_size(d) == 2)
            reduced.push_back(d);
    }
    EXPECT_EQ(DtypeList("integral"), integral);
    EXPECT_EQ(DtypeList("signed_integral"), signed_integral);
    EXPECT_EQ(DtypeList("floating"), floating);
    EXPECT_EQ(DtypeList("reduced_floating"), reduced);
}

TEST_F(DtypeTest, TableElementSizesAreTheDtypeSizes)
{
    for (pith_dtype d : kAllDtypes)
        EXPECT_EQ(shim_dtype_table_size(d), pith_dtype_size(d)) << pith_dtype_name(d);
}

TEST_F(DtypeTest, TableLimitsAreTheTypeRangesAndTheInfinities)
{
    EXPECT_EQ(shim_dtype_table_lowest(PITH_BOOL), 0.0);
    EXPECT_EQ(shim_dtype_table_highest(PITH_BOOL), 1.0);
    EXPECT_EQ(shim_dtype_table_lowest(PITH_UINT8), 0.0);
    EXPECT_EQ(shim_dtype_table_highest(PITH_UINT8), 255.0);
    EXPECT_EQ(shim_dtype_table_lowest(PITH_INT16), -32768.0);
    EXPECT_EQ(shim_dtype_table_highest(PITH_INT32), 2147483647.0);
    EXPECT_EQ(shim_dtype_table_lowest(PITH_INT64), -9223372036854775808.0);
    for (pith_dtype d : {PITH_FLOAT16, PITH_BFLOAT16, PITH_FLOAT32, PITH_FLOAT64}) {
        EXPECT_EQ(shim_dtype_table_lowest(d), -INFINITY) << pith_dtype_name(d);
        EXPECT_EQ(shim_dtype_table_highest(d), INFINITY) << pith_dtype_name(d);
    }
}

TEST_F(DtypeTest, InvalidDtypeNameAndSizeAreTypeErrors)
{
    EXPECT_STREQ(pith_dtype_name((pith_dtype)10), "invalid");
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "invalid dtype 10"));
    EXPECT_EQ(pith_dtype_size((pith_dtype)-3), 0u);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE, "invalid dtype -3"));
}

TEST_F(DtypeTest, FromNameAcceptsPyTorchAliases)
{
    const std::map<std::string, pith_dtype> aliases = {
        {"float", PITH_FLOAT32}, {"double", PITH_FLOAT64},      {"half", PITH_FLOAT16},
        {"long", PITH_INT64},    {"int", PITH_INT32},           {"short", PITH_INT16},
        {"torch.float32", PITH_FLOAT32}, {"pith.bfloat16", PITH_BFLOAT16}};
    for (const auto &[name, dtype] : aliases) {
        pith_dtype parsed;
        ASSERT_TRUE(pith_dtype_from_name(name.c_str(), &parsed)) << name;
        EXPECT_EQ(parsed, dtype) << name;
    }
    pith_dtype parsed = PITH_INT8;
    EXPECT_FALSE(pith_dtype_from_name("float128", &parsed));
    EXPECT_FALSE(pith_dtype_from_name(nullptr, &parsed));
    EXPECT_FALSE(pith_dtype_from_name("float32", nullptr));
    EXPECT_EQ(parsed, PITH_INT8);
}

TEST_F(DtypeTest, DeviceNames)
{
    EXPECT_STREQ(pith_device_name(PITH_CPU), "cpu");
    EXPECT_STREQ(pith_device_name(PITH_META), "meta");
    EXPECT_STREQ(pith_device_name((pith_device)5), "invalid");
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "invalid device 5"));
}

TEST_F(DtypeTest, Categories)
{
    for (pith_dtype d : kAllDtypes) {
        bool floating = d == PITH_FLOAT16 || d == PITH_BFLOAT16 || d == PITH_FLOAT32 ||
                        d == PITH_FLOAT64;
        EXPECT_EQ(pith_dtype_is_floating(d), floating) << pith_dtype_name(d);
        EXPECT_EQ(pith_dtype_is_integral(d, false), !floating && d != PITH_BOOL);
        EXPECT_EQ(pith_dtype_is_integral(d, true), !floating);
    }
    EXPECT_FALSE(pith_dtype_is_floating((pith_dtype)77));
    EXPECT_FALSE(pith_dtype_is_integral((pith_dtype)77, true));
}

TEST_F(DtypeTest, PromoteTypesMatchesPyTorchTable)
{
    pith_test::OracleTable table = pith_test::ReadOracleTable("promotion.csv");
    int rows = 0;
    for (const auto &row : table.rows) {
        if (row[0] != "tensor" || row[2] != "tensor")
            continue;
        pith_dtype a, b, expect;
        ASSERT_TRUE(pith_dtype_from_name(row[1].c_str(), &a)) << row[1];
        ASSERT_TRUE(pith_dtype_from_name(row[3].c_str(), &b)) << row[3];
        ASSERT_TRUE(pith_dtype_from_name(row[4].c_str(), &expect)) << row[4];
        EXPECT_EQ(pith_promote_types(a, b), expect) << row[1] << " with " << row[3];
        rows++;
    }
    EXPECT_EQ(rows, PITH_NUM_DTYPES * PITH_NUM_DTYPES);
    EXPECT_EQ(pith_last_status(), PITH_OK);
}

TEST_F(DtypeTest, PromoteTypesIsSymmetric)
{
    for (pith_dtype a : kAllDtypes)
        for (pith_dtype b : kAllDtypes)
            EXPECT_EQ(pith_promote_types(a, b), pith_promote_types(b, a));
}

/* ---- float16 ---- */

TEST_F(DtypeTest, EveryHalfConvertsToFloatLikeTheCompiler)
{
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float got = shim_half_to_float((uint16_t)h), expect = shim_ref_half_to_float((uint16_t)h);
        if (std::isnan(expect)) {
            ASSERT_TRUE(std::isnan(got)) << std::hex << h;
        } else {
            uint32_t gb, eb;
            std::memcpy(&gb, &got, 4);
            std::memcpy(&eb, &expect, 4);
            ASSERT_EQ(gb, eb) << std::hex << h; /* bitwise: keeps the sign of zero */
        }
    }
}

TEST_F(DtypeTest, FloatToHalfMatchesTheCompilerAcrossTheFloatRange)
{
    /* A prime stride visits every exponent and many mantissa patterns. */
    for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 4099) {
        uint32_t b = (uint32_t)bits;
        float f;
        std::memcpy(&f, &b, 4);
        uint16_t got = shim_float_to_half(f), expect = shim_ref_float_to_half(f);
        if (std::isnan(f)) {
            ASSERT_EQ(got & 0x7c00, 0x7c00) << std::hex << b;
            ASSERT_NE(got & 0x3ff, 0) << std::hex << b;
        } else {
            ASSERT_EQ(got, expect) << std::hex << b;
        }
    }
}

TEST_F(DtypeTest, FloatToHalfEdgeCases)
{
    struct Case {
        float f;
        uint16_t bits; /* from the IEEE 754 binary16 encoding */
    } cases[] = {
        {0.0f, 0x0000},
        {-0.0f, 0x8000},
        {1.0f, 0x3c00},
        {65504.0f, 0x7bff},            /* largest finite */
        {65519.99f, 0x7bff},           /* just below the overflow midpoint */
        {65520.0f, 0x7c00},            /* the midpoint rounds to even: inf */
        {1e10f, 0x7c00},
        {-INFINITY, 0xfc00},
        {std::ldexp(1.0f, -24), 0x0001},      /* smallest subnormal */
        {std::ldexp(1.0f, -25), 0x0000},      /* half of it: tie to even (0) */
        {std::ldexp(3.0f, -25), 0x0002},      /* 1.5 ulps: tie to even (2) */
        {std::ldexp(1.0f, -25) * 1.0001f, 0x0001}, /* just above the tie */
        {std::ldexp(1023.0f, -24), 0x03ff},   /* largest subnormal */
        {std::ldexp(1.0f, -14), 0x0400},      /* smallest normal */
        {1.0f + std::ldexp(1.0f, -11), 0x3c00},       /* tie between 1 and 1+2^-10: even */
        {1.0f + 3 * std::ldexp(1.0f, -11), 0x3c02},   /* tie: rounds up to even */
        {2047.0f * std::ldexp(1.0f, -25), 0x0400},    /* rounds up into the normals */
    };
    for (const Case &c : cases) {
        EXPECT_EQ(shim_float_to_half(c.f), c.bits) << c.f;
        EXPECT_EQ(shim_ref_float_to_half(c.f), c.bits) << "reference disagrees at " << c.f;
    }
    uint16_t nan = shim_float_to_half(NAN);
    EXPECT_EQ(nan & 0x7c00, 0x7c00);
    EXPECT_NE(nan & 0x03ff, 0);
    EXPECT_TRUE(std::isnan(shim_half_to_float(nan)));
}

/* ---- bfloat16 ---- */

TEST_F(DtypeTest, EveryBfloat16ConvertsToFloatByShifting)
{
    for (uint32_t b = 0; b <= 0xffff; b++) {
        float got = shim_bfloat16_to_float((uint16_t)b);
        uint32_t gb;
        std::memcpy(&gb, &got, 4);
        ASSERT_EQ(gb, b << 16);
    }
}

TEST_F(DtypeTest, FloatToBfloat16RoundsToNearestEven)
{
    for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 4093) {
        uint32_t b = (uint32_t)bits;
        float f;
        std::memcpy(&f, &b, 4);
        ASSERT_EQ(shim_float_to_bfloat16(f), shim_ref_float_to_bfloat16(f)) << std::hex << b;
    }
    /* Ties, by construction of the bit patterns. */
    const struct {
        uint32_t f, bf;
    } ties[] = {{0x3f808000u, 0x3f80}, {0x3f818000u, 0x3f82}, {0x7f7f8000u, 0x7f80},
                {0x3f808001u, 0x3f81}, {0x80008000u, 0x8000}};
    for (auto c : ties) {
        float f;
        std::memcpy(&f, &c.f, 4);
        EXPECT_EQ(shim_float_to_bfloat16(f), c.bf) << std::hex << c.f;
        EXPECT_EQ(shim_ref_float_to_bfloat16(f), c.bf) << "reference at " << std::hex << c.f;
    }
    EXPECT_TRUE(std::isnan(shim_bfloat16_to_float(shim_float_to_bfloat16(NAN))));
}

/* ---- generic load / store ---- */

TEST_F(DtypeTest, StoreDoubleClampsOutOfRangeIntegers)
{
    int8_t i8;
    shim_store_double(PITH_INT8, &i8, 1000.0);
    EXPECT_EQ(i8, 127);
    shim_store_double(PITH_INT8, &i8, -1000.0);
    EXPECT_EQ(i8, -128);
    shim_store_double(PITH_INT8, &i8, NAN);
    EXPECT_EQ(i8, 0);
    shim_store_double(PITH_INT8, &i8, -2.9);
    EXPECT_EQ(i8, -2);
    uint8_t u8;
    shim_store_double(PITH_UINT8, &u8, -5.0);
    EXPECT_EQ(u8, 0);
    int64_t i64;
    shim_store_double(PITH_INT64, &i64, 1e30);
    EXPECT_EQ(i64, INT64_MAX);
    shim_store_double(PITH_INT64, &i64, -INFINITY);
    EXPECT_EQ(i64, INT64_MIN);
    int32_t i32;
    shim_store_double(PITH_INT32, &i32, 3e9);
    EXPECT_EQ(i32, INT32_MAX);
    bool b;
    shim_store_double(PITH_BOOL, &b, -0.25);
    EXPECT_TRUE(b);
}

TEST_F(DtypeTest, LoadInt64TruncatesFloatsTowardZero)
{
    float f = 3.9f;
    EXPECT_EQ(shim_load_int64(PITH_FLOAT32, &f), 3);
    f = -3.9f;
    EXPECT_EQ(shim_load_int64(PITH_FLOAT32, &f), -3);
    double d = NAN;
    EXPECT_EQ(shim_load_int64(PITH_FLOAT64, &d), 0);
    d = 1e300;
    EXPECT_EQ(shim_load_int64(PITH_FLOAT64, &d), INT64_MAX);
    int64_t big = INT64_MIN;
    EXPECT_EQ(shim_load_int64(PITH_INT64, &big), INT64_MIN);
    uint16_t h = 0xc500; /* -5.0 in binary16 */
    EXPECT_EQ(shim_load_int64(PITH_FLOAT16, &h), -5);
    EXPECT_EQ(shim_load_double(PITH_FLOAT16, &h), -5.0);
}

} // namespace
