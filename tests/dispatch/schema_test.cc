// schema_test.cc — the schema parser: every construct, every error and where it points.
#include <cmath>
#include <string>

#include "dispatch_shim.h"
#include "test_util.h"

namespace {

class Schema : public DispatchTest {
protected:
    shim_schema s{};
    void parse_ok(const char *text)
    {
        ASSERT_EQ(shim_schema_parse(text, &s), PITH_OK) << pith_last_error();
    }
};

TEST_F(Schema, NamespaceNameAndOverload)
{
    parse_ok("myns::scale.out(Tensor x) -> Tensor");
    EXPECT_STREQ(s.ns, "myns");
    EXPECT_STREQ(s.name, "scale");
    EXPECT_STREQ(s.overload, "out");
}

TEST_F(Schema, NoNamespaceMeansPith)
{
    parse_ok("add.Tensor(Tensor self, Tensor other) -> Tensor");
    EXPECT_STREQ(s.ns, "pith");
    EXPECT_STREQ(s.name, "add");
    EXPECT_STREQ(s.overload, "Tensor");
}

TEST_F(Schema, NoOverloadIsEmpty)
{
    parse_ok("relu_(Tensor(a!) self) -> Tensor(a!)");
    EXPECT_STREQ(s.name, "relu_");
    EXPECT_STREQ(s.overload, "");
}

TEST_F(Schema, EveryArgumentType)
{
    parse_ok("f(Tensor a, Tensor? b, Tensor[] c, int d, int? e, int[] f, int[]? g, float h, "
             "float? i, bool j, Scalar k, Scalar? l, ScalarType m, ScalarType? n, Device? o, "
             "str p, Tensor?[] q) -> Tensor");
    const char *expected[] = {"Tensor", "Tensor?", "Tensor[]", "int",    "int?",   "int[]",
                              "int[]?", "float",   "float?",   "bool",   "Scalar", "Scalar?",
                              "ScalarType", "ScalarType?", "Device?", "str", "Tensor?[]"};
    ASSERT_EQ(s.nargs, 17u);
    for (size_t i = 0; i < 17; i++)
        EXPECT_STREQ(s.args[i].type, expected[i]) << "argument " << i;
    EXPECT_STREQ(s.args[0].name, "a");
    EXPECT_STREQ(s.args[16].name, "q");
}

TEST_F(Schema, TypeNamesCoverEveryType)
{
    ASSERT_EQ(shim_num_arg_types(), 22);
    for (int t = 0; t < shim_num_arg_types(); t++) {
        std::string text = std::string("f(") + shim_arg_type_name(t) + " x) -> Tensor";
        parse_ok(text.c_str());
        EXPECT_STREQ(s.args[0].type, shim_arg_type_name(t));
    }
    EXPECT_STREQ(shim_arg_type_name(99), "unknown");
}

TEST_F(Schema, SizedIntListIsIntList)
{
    parse_ok("f(int[2] stride=1) -> Tensor");
    EXPECT_STREQ(s.args[0].type, "int[]");
    ASSERT_EQ(s.args[0].default_nints, 2u);
    EXPECT_EQ(s.args[0].default_ints[0], 1);
    EXPECT_EQ(s.args[0].default_ints[1], 1);
}

TEST_F(Schema, IntDefaults)
{
    parse_ok("f(int a=0, int b=-1, int c=9223372036854775807, int? d=None) -> Tensor");
    EXPECT_EQ(s.args[0].default_kind, PITH_VALUE_INT);
    EXPECT_EQ(s.args[0].default_int, 0);
    EXPECT_EQ(s.args[1].default_int, -1);
    EXPECT_EQ(s.args[2].default_int, INT64_MAX);
    EXPECT_TRUE(s.args[3].has_default);
    EXPECT_EQ(s.args[3].default_kind, PITH_VALUE_NONE);
}

TEST_F(Schema, FloatDefaults)
{
    parse_ok("f(float a=1e-05, float b=2, float c=-0.5, float d=inf, float e=-inf, "
             "float? g=None, float h=1.5E+3) -> Tensor");
    EXPECT_EQ(s.args[0].default_kind, PITH_VALUE_DOUBLE);
    EXPECT_DOUBLE_EQ(s.args[0].default_double, 1e-05);
    EXPECT_EQ(s.args[1].default_kind, PITH_VALUE_DOUBLE);
    EXPECT_DOUBLE_EQ(s.args[1].default_double, 2.0);
    EXPECT_DOUBLE_EQ(s.args[2].default_double, -0.5);
    EXPECT_TRUE(std::isinf(s.args[3].default_double) && s.args[3].default_double > 0);
    EXPECT_TRUE(std::isinf(s.args[4].default_double) && s.args[4].default_double < 0);
    EXPECT_EQ(s.args[5].default_kind, PITH_VALUE_NONE);
    EXPECT_DOUBLE_EQ(s.args[6].default_double, 1500.0);
}

TEST_F(Schema, BoolDefaults)
{
    parse_ok("f(bool a=True, bool b=False) -> Tensor");
    EXPECT_EQ(s.args[0].default_kind, PITH_VALUE_BOOL);
    EXPECT_TRUE(s.args[0].default_bool);
    EXPECT_FALSE(s.args[1].default_bool);
}

TEST_F(Schema, ScalarDefaultsKeepTheirKind)
{
    parse_ok("f(Scalar a=1, Scalar b=0.5, Scalar c=True, Scalar? d=None) -> Tensor");
    EXPECT_EQ(s.args[0].default_kind, PITH_VALUE_INT);
    EXPECT_EQ(s.args[0].default_int, 1);
    EXPECT_EQ(s.args[1].default_kind, PITH_VALUE_DOUBLE);
    EXPECT_DOUBLE_EQ(s.args[1].default_double, 0.5);
    EXPECT_EQ(s.args[2].default_kind, PITH_VALUE_BOOL);
    EXPECT_TRUE(s.args[2].default_bool);
    EXPECT_EQ(s.args[3].default_kind, PITH_VALUE_NONE);
}

TEST_F(Schema, StringDefaults)
{
    parse_ok(R"(f(str a='none', str b="tanh", str c='it\'s', str d='') -> Tensor)");
    EXPECT_EQ(s.args[0].default_kind, PITH_VALUE_STRING);
    EXPECT_STREQ(s.args[0].default_string, "none");
    EXPECT_STREQ(s.args[1].default_string, "tanh");
    EXPECT_STREQ(s.args[2].default_string, "it's");
    EXPECT_STREQ(s.args[3].default_string, "");
}

TEST_F(Schema, IntListDefaults)
{
    parse_ok("f(int[] a=[], int[] b=[1, -2, 3], int[]? c=None, int[] d=[ 4 ]) -> Tensor");
    EXPECT_EQ(s.args[0].default_kind, PITH_VALUE_INT_LIST);
    EXPECT_EQ(s.args[0].default_nints, 0u);
    ASSERT_EQ(s.args[1].default_nints, 3u);
    EXPECT_EQ(s.args[1].default_ints[0], 1);
    EXPECT_EQ(s.args[1].default_ints[1], -2);
    EXPECT_EQ(s.args[1].default_ints[2], 3);
    EXPECT_EQ(s.args[2].default_kind, PITH_VALUE_NONE);
    ASSERT_EQ(s.args[3].default_nints, 1u);
    EXPECT_EQ(s.args[3].default_ints[0], 4);
}

TEST_F(Schema, DtypeAndDeviceDefaults)
{
    parse_ok("f(ScalarType a=long, ScalarType? b=float32, ScalarType? c=None, "
             "Device? d=None, Device? e=meta) -> Tensor");
    EXPECT_EQ(s.args[0].default_kind, PITH_VALUE_DTYPE);
    EXPECT_EQ(s.args[0].default_dtype, PITH_INT64);
    EXPECT_EQ(s.args[1].default_dtype, PITH_FLOAT32);
    EXPECT_EQ(s.args[2].default_kind, PITH_VALUE_NONE);
    EXPECT_EQ(s.args[3].default_kind, PITH_VALUE_NONE);
    EXPECT_EQ(s.args[4].default_kind, PITH_VALUE_DEVICE);
    EXPECT_EQ(s.args[4].default_device, PITH_META);
}

TEST_F(Schema, DtypeDefaultsTakeEveryNameAndAliasOfADtype)
{
    const char *names[] = {"bool",    "uint8",    "int8",    "int16",   "int32", "int64",
                           "float16", "bfloat16", "float32", "float64", "half",  "short",
                           "int",     "long",     "float",   "double"};
    for (const char *name : names) {
        std::string text = std::string("f(ScalarType a=") + name + ") -> Tensor";
        parse_ok(text.c_str());
        pith_dtype expected;
        ASSERT_TRUE(pith_dtype_from_name(name, &expected)) << name;
        EXPECT_EQ(s.args[0].default_kind, PITH_VALUE_DTYPE) << name;
        EXPECT_EQ(s.args[0].default_dtype, expected) << name;
    }
}

TEST_F(Schema, TensorDefaultsToNone)
{
    parse_ok("f(Tensor? bias=None) -> Tensor");
    EXPECT_TRUE(s.args[0].has_default);
    EXPECT_EQ(s.args[0].default_kind, PITH_VALUE_NONE);
}

TEST_F(Schema, NoDefault)
{
    parse_ok("f(Tensor x, int n) -> Tensor");
    EXPECT_FALSE(s.args[0].has_default);
    EXPECT_FALSE(s.args[1].has_default);
}

TEST_F(Schema, KwargOnlyAfterStar)
{
    parse_ok("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> "
             "Tensor(a!)");
    ASSERT_EQ(s.nargs, 4u);
    EXPECT_FALSE(s.args[0].kwarg_only);
    EXPECT_FALSE(s.args[1].kwarg_only);
    EXPECT_TRUE(s.args[2].kwarg_only);
    EXPECT_TRUE(s.args[3].kwarg_only);
    EXPECT_FALSE(s.args[3].has_default); // a kwarg-only argument may follow a default
}

TEST_F(Schema, AliasAnnotations)
{
    parse_ok("f(Tensor(a) x, Tensor(b!) y, Tensor z) -> Tensor(a)");
    EXPECT_EQ(s.args[0].alias_set, 'a');
    EXPECT_FALSE(s.args[0].is_mutable);
    EXPECT_EQ(s.args[1].alias_set, 'b');
    EXPECT_TRUE(s.args[1].is_mutable);
    EXPECT_EQ(s.args[2].alias_set, 0);
    EXPECT_EQ(s.returns[0].alias_set, 'a');
    EXPECT_FALSE(s.returns[0].is_mutable);
}

TEST_F(Schema, AliasedOptionalAndList)
{
    parse_ok("f(Tensor(b)[] xs, Tensor(a!)? out=None) -> Tensor[]");
    EXPECT_STREQ(s.args[0].type, "Tensor[]");
    EXPECT_EQ(s.args[0].alias_set, 'b');
    EXPECT_STREQ(s.args[1].type, "Tensor?");
    EXPECT_TRUE(s.args[1].is_mutable);
}

TEST_F(Schema, TupleReturnsWithNames)
{
    parse_ok("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
             "indices)");
    ASSERT_EQ(s.nreturns, 2u);
    EXPECT_STREQ(s.returns[0].name, "values");
    EXPECT_STREQ(s.returns[1].name, "indices");
    EXPECT_STREQ(s.returns[0].type, "Tensor");
}

TEST_F(Schema, UnnamedTupleReturns)
{
    parse_ok("f(Tensor x) -> (Tensor, Tensor(a!))");
    ASSERT_EQ(s.nreturns, 2u);
    EXPECT_STREQ(s.returns[0].name, "");
    EXPECT_TRUE(s.returns[1].is_mutable);
}

TEST_F(Schema, TensorListReturn)
{
    parse_ok("split.Tensor(Tensor(a) self, int split_size, int dim=0) -> Tensor[]");
    ASSERT_EQ(s.nreturns, 1u);
    EXPECT_STREQ(s.returns[0].type, "Tensor[]");
}

TEST_F(Schema, NoReturns)
{
    parse_ok("f(Tensor x) -> ()");
    EXPECT_EQ(s.nreturns, 0u);
}

TEST_F(Schema, NoArguments)
{
    parse_ok("f() -> Tensor");
    EXPECT_EQ(s.nargs, 0u);
}

TEST_F(Schema, WhitespaceIsFree)
{
    parse_ok("  ns::f.o ( Tensor  x ,  * ,  int  n = 3 )  ->  ( Tensor  a , Tensor b )  ");
    EXPECT_STREQ(s.ns, "ns");
    ASSERT_EQ(s.nargs, 2u);
    EXPECT_EQ(s.args[1].default_int, 3);
    EXPECT_TRUE(s.args[1].kwarg_only);
    EXPECT_EQ(s.nreturns, 2u);
}

TEST_F(Schema, EveryRegisteredSchemaParses)
{
    size_t n = pith_op_count();
    ASSERT_GT(n, 100u); // the built-in table
    for (size_t i = 0; i < n; i++) {
        const pith_op *op = pith_op_at(i);
        ASSERT_NE(op, nullptr);
        EXPECT_EQ(shim_schema_parse(pith_op_schema(op), &s), PITH_OK) << pith_last_error();
    }
}

TEST_F(Schema, NullSchemaIsAnError)
{
    EXPECT_EQ(shim_schema_parse(nullptr, &s), PITH_ERR_VALUE);
    EXPECT_ERROR(PITH_ERR_VALUE, "NULL");
}

// ---- errors: the message, the column, and the caret under the bad character ----

struct BadSchema {
    const char *text;
    const char *fragment;
    size_t column; // 1-based
};

class SchemaError : public DispatchTest, public ::testing::WithParamInterface<BadSchema> {};

TEST_P(SchemaError, PointsAtTheBadCharacter)
{
    const BadSchema &bad = GetParam();
    shim_schema s{};
    ASSERT_EQ(shim_schema_parse(bad.text, &s), PITH_ERR_VALUE) << bad.text;
    std::string msg = pith_last_error();
    EXPECT_NE(msg.find("invalid schema: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(bad.fragment), std::string::npos) << msg;
    EXPECT_NE(msg.find("at column " + std::to_string(bad.column) + "\n"), std::string::npos)
        << msg;
    // Line 2 quotes the schema, line 3 has the caret under the column.
    size_t nl1 = msg.find('\n'), nl2 = msg.find('\n', nl1 + 1);
    ASSERT_NE(nl1, std::string::npos) << msg;
    ASSERT_NE(nl2, std::string::npos) << msg;
    EXPECT_EQ(msg.substr(nl1 + 1, nl2 - nl1 - 1), std::string("  ") + bad.text);
    EXPECT_EQ(msg.substr(nl2 + 1), std::string(2 + bad.column - 1, ' ') + "^");
}

const BadSchema bad_schemas[] = {
    {"", "expected an operator name but found the end of the schema", 1},
    {"(Tensor x) -> Tensor", "expected an operator name but found '('", 1},
    {"add", "expected '(' to open the arguments but found the end", 4},
    {"add(", "expected a type", 5},
    {"add(Tensor", "expected an argument name", 11},
    {"add(Tensor x", "expected ',' or ')' but found the end of the schema", 13},
    {"add(Tensor x y) -> Tensor", "expected ',' or ')' but found 'y'", 14},
    {"add(Tensor x)", "expected '->'", 14},
    {"add(Tensor x) - Tensor", "expected '->' but found '-'", 15},
    {"add(Tensor x) ->", "expected a type", 17},
    {"add(Tensor x) -> Tensor junk", "unexpected 'j' after the returns", 25},
    {"add(Foo x) -> Tensor", "unknown type 'Foo'", 5},
    {"ns::(Tensor x) -> Tensor", "expected an operator name after '::'", 5},
    {"add.(Tensor x) -> Tensor", "expected an overload name after '.'", 5},
    {"add(int x=None) -> Tensor", "None is not a valid default for type 'int'", 11},
    {"add(Tensor x=1) -> Tensor", "a Tensor argument can only default to None", 14},
    {"add(Tensor[] x=[]) -> Tensor", "a Tensor[] argument can only default to None", 16},
    {"add(str s='abc) -> Tensor", "unterminated string", 11},
    {"add(str s=abc) -> Tensor", "expected a quoted string", 11},
    {"add(int x=1.5) -> Tensor", "expected an integer", 11},
    {"add(int x=) -> Tensor", "expected a number", 11},
    {"add(float x=abc) -> Tensor", "expected a number", 13},
    {"add(float x=1e) -> Tensor", "expected the digits of an exponent", 15},
    {"add(float x=1.5.2) -> Tensor", "unexpected character in a number", 16},
    {"add(int x=12ab) -> Tensor", "unexpected character in a number", 13},
    {"add(int x=99999999999999999999) -> Tensor", "integer is out of range", 11},
    {"add(bool b=1) -> Tensor", "expected True or False", 12},
    {"add(bool b=true) -> Tensor", "expected True or False", 12},
    {"add(int[] x=[1 2]) -> Tensor", "expected ',' or ']'", 16},
    {"add(int[] x=[1,) -> Tensor", "expected a number", 16},
    {"add(ScalarType t=complex) -> Tensor", "expected a dtype name or None", 18},
    {"add(ScalarType t=float32_and_a_long_tail) -> Tensor", "expected a dtype name or None", 18},
    {"add(Device? d=cuda) -> Tensor", "expected cpu, meta or None", 15},
    {"add(Tensor x, *, *) -> Tensor", "a second '*'", 18},
    {"add(Tensor x, *) -> Tensor", "expected ',' after '*' but found ')'", 16},
    {"add(Tensor x, Tensor x) -> Tensor", "duplicate argument name 'x'", 22},
    {"add(int x=1, int y) -> Tensor", "argument 'y' without a default follows", 18},
    {"add(int(a) x) -> Tensor", "an alias annotation is only allowed on Tensor", 8},
    {"add(Tensor(A) x) -> Tensor", "expected an alias set letter", 12},
    {"add(Tensor(a!x) x) -> Tensor", "expected ')' to close the alias annotation", 14},
    {"add(bool[] x) -> Tensor", "type 'bool[]' is not supported", 5},
    {"add(Tensor[]? x) -> Tensor", "type 'Tensor[]?' is not supported", 5},
    {"add(int?[] x) -> Tensor", "type 'int?[]' is not supported", 5},
    {"add(Tensor?[]? x) -> Tensor", "type 'Tensor?[]?' is not supported", 5},
    {"add(Tensor?[][] x) -> Tensor", "type 'Tensor?[][' is not supported", 5},
    {"add(Tensor?[] x=None) -> Tensor", "None is not a valid default for type 'Tensor?[]'", 17},
    {"add(float?[] x) -> Tensor", "type 'float?[]' is not supported", 5},
    {"add(Device d) -> Tensor", "type 'Device' is not supported", 5},
    {"add(int[ x) -> Tensor", "expected ']'", 9},
    {"add(Tensor x) -> (Tensor, Tensor, Tensor, Tensor, Tensor)", "more than 4 returns", 51},
    {"add(Tensor x) -> (Tensor a Tensor b)", "expected ',' or ')' but found 'T'", 28},
    {"add(Tensor x) -> (Tensor a,", "expected a type", 28},
};

INSTANTIATE_TEST_SUITE_P(Malformed, SchemaError, ::testing::ValuesIn(bad_schemas));

TEST_F(Schema, LongSchemaErrorQuotesAWindow)
{
    std::string text = "f(";
    for (int i = 0; i < 40; i++)
        text += "int a" + std::to_string(i) + "=1, ";
    text += "int bad=x) -> Tensor";
    ASSERT_EQ(shim_schema_parse(text.c_str(), &s), PITH_ERR_VALUE);
    std::string msg = pith_last_error();
    size_t column = text.find("=x") + 2; // 1-based column of 'x'
    EXPECT_NE(msg.find("at column " + std::to_string(column) + "\n"), std::string::npos) << msg;
    size_t nl1 = msg.find('\n'), nl2 = msg.find('\n', nl1 + 1);
    std::string quoted = msg.substr(nl1 + 1, nl2 - nl1 - 1);
    std::string caret = msg.substr(nl2 + 1);
    EXPECT_EQ(quoted.substr(0, 5), "  ...");
    ASSERT_EQ(caret.back(), '^');
    EXPECT_EQ(quoted[caret.size() - 1], 'x') << quoted << "\n" << caret;
    EXPECT_LT(msg.size(), 700u);
}

} // namespace
