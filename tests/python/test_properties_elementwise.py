"""Elementwise ops as properties: unary and binary ops, broadcasting, type promotion (Python
scalars included), in-place forms, comparisons, bitwise ops, integer division semantics and
pow, over generated dtypes, shapes (empty and 0-dim) and layouts. NumPy computes the values;
PyTorch, when installed, gives the result dtype (or the error) and the values too; without it
the result dtype comes from PyTorch's tables in tests/data."""
import math
import operator
import os
import tomllib

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import pith
from conftest import (DTYPE_NAMES, FLOAT_NAMES, INT_NAMES, PROPERTY, assert_matches_torch,
                      assert_values, examples, broadcastable_shapes, dtype_name, np_dtype, read_table,
                      round_to_bfloat16, shapes, tensors, to_pith, to_torch, torch_or_none)

torch = torch_or_none()
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
KIND = {"bool": 0, **{n: 1 for n in INT_NAMES}, **{n: 2 for n in FLOAT_NAMES}}

# ---- the oracle --------------------------------------------------------------------------

_PROMOTION = {(r["lhs_kind"], r["lhs_dtype"], r["rhs_kind"], r["rhs_dtype_or_scalar"]):
              r["result_dtype"] for r in read_table("promotion.csv")}


def promoted(a, b, b_kind="tensor"):
    """PyTorch's promotion of a tensor of dtype `a` with `b` (a dtype name; for b_kind
    'scalar', one of 'bool', 'int', 'float'), from tests/data/promotion.csv."""
    return _PROMOTION[("tensor", a, b_kind, b)]


def result_type(a, name_a, b, name_b):
    """PyTorch's compute dtype of arrays a and b: a 0-dim operand beside a dimensioned one
    takes part only by category."""
    if torch is not None:
        return dtype_name(torch.result_type(to_torch(a, name_a), to_torch(b, name_b)))
    if np.ndim(a) == 0 and np.ndim(b) > 0:
        return promoted(name_b, name_a, "0dim")
    if np.ndim(b) == 0 and np.ndim(a) > 0:
        return promoted(name_a, name_b, "0dim")
    return promoted(name_a, name_b)


def _op_file_tests(family, variables):
    """{name: test} and {name: NumPy reference} of the op file's unary or binary ops: the
    `test` key of each (ops/ops.toml, Note [The op file]), its `numpy` expression made a
    function of `variables`."""
    with open(os.path.join(REPO, "ops", "ops.toml"), "rb") as f:
        ops = tomllib.load(f)["op"]
    tests = {name: rec["test"] for name, rec in ops.items() if rec.get("family") == family}
    refs = {name: eval(f"lambda {variables}: " + t["numpy"],  # noqa: S307 (our own text)
                       {"np": np, "math": math})
            for name, t in tests.items()}
    return tests, refs


_, BINARY = _op_file_tests("binary", "a, b")
OPERATOR = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
            "div": operator.truediv, "floor_divide": operator.floordiv,
            "remainder": operator.mod, "pow": operator.pow, "eq": operator.eq,
            "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
            "ge": operator.ge, "bitwise_and": operator.and_, "bitwise_or": operator.or_,
            "bitwise_xor": operator.xor}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def binary_result_dtype(op, compute, lhs, rhs, rhs_is_scalar=False):
    """Result dtype of binary `op` on operands of dtypes `lhs` and `rhs` (a Python scalar's
    kind, 'bool', 'int' or 'float', when rhs_is_scalar), computed in `compute`; None where
    PyTorch raises. Checked against torch in test_fallback_rules_agree_with_torch."""
    if op in COMPARISONS or op.startswith("logical"):
        return "bool"
    if op == "div":
        return compute if KIND[compute] == 2 else "float32"
    if op == "sub" and "bool" in (lhs, rhs):
        return None
    if op == "pow" and compute == "bool":
        return "bool" if rhs_is_scalar and lhs == "bool" else None
    if op in ("floor_divide", "remainder") and compute == "bool":
        return None
    if op.startswith("bitwise") and KIND[compute] == 2:
        return None
    return compute


def compute_dtype(op, compute):
    """The dtype NumPy computes `op` in to get PyTorch's values."""
    if op == "div" and KIND[compute] < 2:
        return "float32"
    return compute


def numpy_binary(op, a, b, compute, result):
    """`op` on NumPy arrays, computed as PyTorch does: inputs cast to the compute dtype;
    float16 and bfloat16 through float32, rounded at the end."""
    compute = compute_dtype(op, compute)
    wide = {"float16": np.float32, "bfloat16": np.float32}.get(compute, np_dtype(compute))
    with np.errstate(all="ignore"):
        out = BINARY[op](np.asarray(a).astype(wide), np.asarray(b).astype(wide))
    if result == "float16":
        return out.astype(np.float16)
    if result == "bfloat16":
        return round_to_bfloat16(out)
    return out


def torch_outcome(fn):
    """('ok', result) or ('error', exception) of a torch call."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - any torch error means pith must raise too
        return "error", e


def check_against(pith_fn, expected_dtype, expected_values, torch_fn=None, rtol=None,
                  atol=None):
    """pith_fn() (called once: it may work in place) raises where the oracle says error,
    else gives its dtype and values. The oracle is torch when installed (its outcome and
    values) plus NumPy (the values), else the fallback dtype rules plus NumPy."""
    ref = None
    if torch is not None and torch_fn is not None:
        kind, ref = torch_outcome(torch_fn)
        if kind == "error":
            expected_dtype = None
    if expected_dtype is None:
        with pytest.raises((RuntimeError, TypeError)):
            pith_fn()
        return
    out = pith_fn()
    if ref is not None:
        assert_matches_torch(out, ref, rtol=rtol, atol=atol)
    assert_values(out, expected_values(), expected_dtype, rtol=rtol, atol=atol)


# ---- value ranges per op -----------------------------------------------------------------

def operand_range(op, name, side):
    """(lo, hi) of generated values so that every implementation agrees exactly: divisors
    are never 0, pow's exponents are small and non-negative."""
    if op == "pow":
        return (0, 3) if side == "b" else (-4, 4)
    if op in ("floor_divide", "remainder", "div") and side == "b" and name != "bool":
        return (1, 100)  # see test_negative_divisors... for the signs
    if op in ("floor_divide", "remainder") and KIND[name] == 2:
        return (-64, 64)
    return (None, None)


def grid(t_and_a, name, op):
    """Float operands of floor_divide/remainder on the k/4 grid: a/b is then either exact
    or far from an integer, so floor() is the same in every implementation."""
    t, a = t_and_a
    if op in ("floor_divide", "remainder") and KIND[name] == 2:
        a = np.round(a * 4) / 4
        return to_pith(a, name), a
    return t, a


# ---- unary -------------------------------------------------------------------------------

# The unary ops' NumPy references, result rules and input ranges.
UNARY_TESTS, UNARY = _op_file_tests("unary", "x")
FLOAT_UNARY = {n for n, t in UNARY_TESTS.items() if t.get("result") in ("float", "float_only")}
# Float ops that PyTorch does not run on bool or integer tensors (no promotion to float).
FLOAT_ONLY_UNARY = {n for n, t in UNARY_TESTS.items() if t.get("result") == "float_only"}
UNARY_RANGE = {n: tuple(t["range"]) for n, t in UNARY_TESTS.items() if "range" in t}


def torch_op(name):
    """PyTorch's function of an op: torch.<name>, or torch.nn.functional.<name> for the
    ones PyTorch keeps only there (silu)."""
    return getattr(torch, name, None) or getattr(torch.nn.functional, name)


def test_every_elementwise_op_of_the_table_has_a_numpy_reference():
    """The op file's references cover the built package's lists (pith/ops.h's): every op
    is checked, and a build older than the op file is noticed."""
    unary, binary = pith._C._elementwise_ops()
    assert sorted(UNARY) == sorted(unary)
    assert sorted(BINARY) == sorted(binary)


def unary_result_dtype(op, name):
    if op in FLOAT_ONLY_UNARY and KIND[name] < 2:
        return None
    test = UNARY_TESTS[op]
    if "bool" in test.get("rejects", ()) and name == "bool":
        return None
    if "float" in test.get("rejects", ()) and KIND[name] == 2:
        return None
    if op in FLOAT_UNARY:
        return name if KIND[name] == 2 else "float32"
    if test.get("result") == "bool":
        return "bool"
    return name


def numpy_unary(op, a, result):
    wide = np.float32 if result in ("float16", "bfloat16", "float32") and op in FLOAT_UNARY \
        else None
    x = a.astype(wide) if wide else a
    with np.errstate(all="ignore"):
        out = a.copy() if op == "sign" and a.dtype == np.bool_ else UNARY[op](x)
    if result == "bfloat16":
        return round_to_bfloat16(out)
    return np.asarray(out).astype(np_dtype(result))


@given(data=st.data())
@examples(150)
def test_unary_op_matches_numpy(data):
    op = data.draw(st.sampled_from(sorted(UNARY)), "op")
    name = data.draw(st.sampled_from(DTYPE_NAMES), "dtype")
    lo, hi = UNARY_RANGE.get(op, (-1000, 1000))
    lo, hi = (lo, hi) if name in FLOAT_NAMES else (max(lo, -100), min(hi, 100))
    t, a = data.draw(tensors(name, data.draw(shapes, "shape"), lo=lo, hi=hi), "x")
    result = unary_result_dtype(op, name)
    rtol = 4e-6 if op in FLOAT_UNARY and result == "float32" else None
    check_against(lambda: getattr(pith, op)(t), result, lambda: numpy_unary(op, a, result),
                  lambda: torch_op(op)(to_torch(a, name)), rtol=rtol)


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_method_is_the_function(op):
    x = pith.tensor([[1, 2], [3, 4]]) if op == "bitwise_not" else \
        pith.tensor([[0.5, 2.0], [3.0, 4.0]])
    assert getattr(x, op)().tolist() == getattr(pith, op)(x).tolist()


@pytest.mark.parametrize("name", ["int8", "int64", "float32"])
def test_unary_operators_neg_abs_invert(name):
    a = np.array([[-3, 0, 5]], dtype=np_dtype(name))
    t = to_pith(a, name)
    assert_values(-t, -a, name)
    assert_values(abs(t), np.abs(a), name)
    if name != "float32":
        assert_values(~t, ~a, name)


def test_invert_of_bool_is_logical_not():
    assert (~pith.tensor([True, False])).tolist() == [False, True]


# ---- binary: tensors, broadcasting, promotion --------------------------------------------

# A float16/bfloat16 op with a one-element operand of another dtype (a 0-dim tensor, a
# Python scalar): PyTorch's CPU kernels sometimes read that operand at float32 precision and
# sometimes round it to the half type first, depending on the op, the operand's position and
# dtype, and the output's size; pith rounds it, except for a one-element `other` of mul, div
# and floor_divide (Note [Reduced-precision ops with a scalar], kernels/elementwise_ops.c;
# docs/python.md). The generated comparisons leave this case to the fixed tests below.
def half_scalar_mix(compute, operands):
    """Whether `compute` is a half type and an operand (name, values) has another dtype: a
    one-element one as above, or a tensor whose integer values PyTorch may read at float32
    precision where pith converts them to the half type first (an int16 -21282 is -21280 in
    float16)."""
    return compute in ("float16", "bfloat16") and any(n != compute for n, v in operands)


@given(data=st.data())
@examples(250)
def test_binary_op_broadcasts_and_promotes_like_torch(data):
    op = data.draw(st.sampled_from(sorted(BINARY)), "op")
    name_a = data.draw(st.sampled_from(DTYPE_NAMES), "dtype a")
    name_b = data.draw(st.sampled_from(DTYPE_NAMES), "dtype b")
    shape_a = data.draw(shapes, "shape a")
    shape_b = data.draw(broadcastable_shapes(shape_a), "shape b")
    if data.draw(st.booleans(), "swap shapes"):
        shape_a, shape_b = shape_b, shape_a
    ta, a = grid(data.draw(tensors(name_a, shape_a, *operand_range(op, name_a, "a")), "a"),
                 name_a, op)
    tb, b = grid(data.draw(tensors(name_b, shape_b, *operand_range(op, name_b, "b")), "b"),
                 name_b, op)
    compute = result_type(a, name_a, b, name_b)
    assume(not (op in ("floor_divide", "remainder") and KIND[compute] < 2 and (b == 0).any()))
    assume(not half_scalar_mix(compute, ((name_a, a), (name_b, b))))
    result = binary_result_dtype(op, compute, name_a, name_b)
    check_against(lambda: getattr(pith, op)(ta, tb), result,
                  lambda: numpy_binary(op, a, b, compute, result),
                  lambda: torch_op(op)(to_torch(a, name_a), to_torch(b, name_b)))


@pytest.mark.parametrize("op", sorted(OPERATOR))
def test_operator_is_the_function(op):
    a = pith.tensor([[6, -7, 9]], dtype=pith.int32)
    b = pith.tensor([[2], [4]], dtype=pith.int32)
    assert OPERATOR[op](a, b).tolist() == getattr(pith, op)(a, b).tolist()
    assert OPERATOR[op](a, b).dtype is getattr(pith, op)(a, b).dtype


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_float_binary_method_is_the_function(op):
    a, b = pith.tensor([1.5, -2.0]), pith.tensor([0.5, 4.0])
    assert getattr(a, op)(b).tolist() == getattr(pith, op)(a, b).tolist()


@pytest.mark.parametrize("row", read_table("promotion.csv"),
                         ids=lambda r: "-".join(list(r.values())[:4]))
def test_add_promotes_like_pytorch_table(row):
    a = pith.ones(2, dtype=getattr(pith, row["lhs_dtype"]))
    kind, other = row["rhs_kind"], row["rhs_dtype_or_scalar"]
    if kind == "tensor":
        b = pith.ones(2, dtype=getattr(pith, other))
    elif kind == "0dim":
        b = pith.ones((), dtype=getattr(pith, other))
    else:
        b = {"bool": True, "int": 3, "float": 2.5}[other]
    assert dtype_name((a + b).dtype) == row["result_dtype"]
    assert dtype_name((b + a).dtype) == row["result_dtype"]


def test_fallback_rules_agree_with_torch():
    """The tables this file falls back to without torch say what torch does."""
    if torch is None:
        pytest.skip("torch is not installed")
    for op in BINARY:
        for a in DTYPE_NAMES:
            for b in DTYPE_NAMES:
                x = torch.ones(2, dtype=getattr(torch, a))
                y = torch.ones(2, dtype=getattr(torch, b))
                kind, ref = torch_outcome(lambda: torch_op(op)(x, y))
                compute = promoted(a, b)
                want = None if kind == "error" else dtype_name(ref.dtype)
                assert binary_result_dtype(op, compute, a, b) == want, (op, a, b)
    for op in OPERATOR:
        for a in DTYPE_NAMES:
            for s in (True, 2, 2.5):
                x = torch.ones(2, dtype=getattr(torch, a))
                compute = promoted(a, scalar_kind(s), "scalar")
                for reflected in (False, True):
                    kind, ref = torch_outcome(
                        lambda: OPERATOR[op](s, x) if reflected else OPERATOR[op](x, s))
                    want = None if kind == "error" else dtype_name(ref.dtype)
                    lhs, rhs = (scalar_kind(s), a) if reflected else (a, scalar_kind(s))
                    got = binary_result_dtype(op, compute, lhs, rhs, not reflected)
                    assert got == want, (op, a, s, reflected)
    for op in UNARY:
        for a in DTYPE_NAMES:
            x = torch.ones(2, dtype=getattr(torch, a))
            kind, ref = torch_outcome(lambda: torch_op(op)(x))
            want = None if kind == "error" else dtype_name(ref.dtype)
            assert unary_result_dtype(op, a) == want, (op, a)


# ---- Python scalars ----------------------------------------------------------------------

scalars = st.one_of(st.booleans(), st.integers(-300, 300),
                    st.floats(-100, 100, allow_nan=False, width=32))


def scalar_kind(s):
    return "bool" if isinstance(s, bool) else "int" if isinstance(s, int) else "float"


DIVISIONS = ("div", "floor_divide", "remainder")


@given(data=st.data())
@examples(200)
def test_python_scalars_promote_weakly(data):
    op = data.draw(st.sampled_from(sorted(OPERATOR)), "op")
    name = data.draw(st.sampled_from(DTYPE_NAMES), "dtype")
    reflected = data.draw(st.booleans(), "scalar on the left")
    s = data.draw(scalars, "scalar")
    if op in DIVISIONS + ("pow",) and not reflected and not isinstance(s, bool):
        s = abs(s) % 4 + 1  # no zero divisors, small exponents
    if op in ("floor_divide", "remainder") and isinstance(s, float):
        s = round(s * 4) / 4 or 1.0
    side = "b" if reflected else "a"
    t, a = grid(data.draw(tensors(name, data.draw(shapes, "shape"),
                                  *operand_range(op, name, side)), "x"), name, op)
    compute = promoted(name, scalar_kind(s), "scalar") if torch is None else \
        dtype_name((torch.ones(1, dtype=getattr(torch, name)) + s).dtype)
    divisor = a if reflected else np.array(s)
    assume(not (op in ("floor_divide", "remainder") and KIND[compute] < 2
                and (divisor == 0).any()))
    assume(not half_scalar_mix(compute, ((name, a), ("float64" if isinstance(s, float)
                                                     else "int64", s))))
    lhs, rhs = (scalar_kind(s), name) if reflected else (name, scalar_kind(s))
    result = binary_result_dtype(op, compute, lhs, rhs, not reflected)
    scalar_np = np.array(s).astype(np.float64 if isinstance(s, float) else np.int64)

    def pith_fn():
        return OPERATOR[op](s, t) if reflected else OPERATOR[op](t, s)

    def numpy_fn():
        lhs, rhs = (scalar_np, a) if reflected else (a, scalar_np)
        return numpy_binary(op, lhs, rhs, compute, result)

    def torch_fn():
        x = to_torch(a, name)
        return OPERATOR[op](s, x) if reflected else OPERATOR[op](x, s)

    check_against(pith_fn, result, numpy_fn, torch_fn)


@pytest.mark.parametrize("name,scalar,expected", [
    ("int8", 1000, "int8"), ("uint8", -1, "uint8"), ("int32", 2.5, "float32"),
    ("int64", True, "int64"), ("bool", True, "bool"), ("bool", 2, "int64"),
    ("bool", 0.5, "float32"), ("float16", 1e4, "float16"), ("bfloat16", 3, "bfloat16"),
    ("float64", 2, "float64")])
def test_weak_scalar_examples(name, scalar, expected):
    t = pith.ones(3, dtype=getattr(pith, name))
    assert dtype_name((t + scalar).dtype) == expected
    assert dtype_name((t * scalar).dtype) == expected
    if torch is not None:
        assert dtype_name((torch.ones(3, dtype=getattr(torch, name)) + scalar).dtype) == expected


def test_int8_plus_1000_wraps_like_torch():
    out = pith.tensor([100, -100], dtype=pith.int8) + 1000
    expected = (np.array([100, -100], dtype=np.int8) + np.int8(np.int64(1000).astype(np.int8)))
    assert out.dtype is pith.int8 and out.tolist() == expected.tolist()


def test_zero_dim_tensor_promotes_a_dimensioned_tensor_only_by_category():
    out = pith.ones(2, dtype=pith.int8) + pith.tensor(5, dtype=pith.int64)
    assert out.dtype is pith.int8
    out = pith.ones(2, dtype=pith.float16) + pith.tensor(5.0, dtype=pith.float64)
    assert out.dtype is pith.float16
    # a higher category: the 0-dim tensor's own dtype (not the default dtype)
    out = pith.ones(2, dtype=pith.int8) + pith.tensor(5.0, dtype=pith.float64)
    assert out.dtype is pith.float64


# ---- in-place ----------------------------------------------------------------------------

INPLACE = ["add", "sub", "mul", "div", "floor_divide", "remainder", "pow",
           "bitwise_and", "bitwise_or", "bitwise_xor"]
INPLACE_OPERATOR = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul,
                    "div": operator.itruediv, "floor_divide": operator.ifloordiv,
                    "remainder": operator.imod, "pow": operator.ipow,
                    "bitwise_and": operator.iand, "bitwise_or": operator.ior,
                    "bitwise_xor": operator.ixor}


def inplace_expected(op, name_a, a, name_b, b):
    """Result dtype of a.<op>_(b) (a's dtype), or None where PyTorch raises."""
    compute = result_type(a, name_a, b, name_b)
    result = binary_result_dtype(op, compute, name_a, name_b)
    if result is None or KIND[result] > KIND[name_a]:
        return None, compute
    return name_a, compute


@given(data=st.data())
@examples(120)
def test_inplace_method_writes_into_self(data):
    op = data.draw(st.sampled_from(INPLACE), "op")
    name_a = data.draw(st.sampled_from(DTYPE_NAMES), "dtype a")
    name_b = data.draw(st.sampled_from(DTYPE_NAMES), "dtype b")
    shape = data.draw(shapes, "shape")
    keep = data.draw(st.integers(0, len(shape)), "trailing dims of b")
    shape_b = tuple(1 if data.draw(st.booleans()) else n for n in shape[len(shape) - keep:])
    layout = data.draw(st.sampled_from(["contiguous", "transposed", "stepped", "offset"]))
    ta, a = grid(data.draw(tensors(name_a, shape, layout, *operand_range(op, name_a, "a")),
                           "a"), name_a, op)
    tb, b = grid(data.draw(tensors(name_b, shape_b, None, *operand_range(op, name_b, "b")),
                           "b"), name_b, op)
    result, compute = inplace_expected(op, name_a, a, name_b, b)
    assume(not (op in ("floor_divide", "remainder") and KIND[compute] < 2 and (b == 0).any()))
    assume(not half_scalar_mix(compute, ((name_a, a), (name_b, b))))
    use_operator = data.draw(st.booleans(), "operator form")

    def pith_fn():
        before = ta
        if use_operator:
            out = INPLACE_OPERATOR[op](ta, tb)
        else:
            out = getattr(ta, op + "_")(tb)
        assert out is before
        return out

    def numpy_fn():
        full = numpy_binary(op, a, b, compute, binary_result_dtype(op, compute, name_a, name_b))
        if KIND[result] == 2:
            return numpy_binary("add", full, np.zeros((), np.float32), result, result)
        return full.astype(np_dtype(result))

    def torch_fn():
        x = to_torch(a, name_a)
        return getattr(x, op + "_")(to_torch(b, name_b))

    check_against(pith_fn, result, numpy_fn, torch_fn)


def test_inplace_on_a_transposed_view_writes_through_to_the_base():
    base = pith.tensor([[1.0, 2.0], [3.0, 4.0]])
    view = base.t()
    view += pith.tensor([10.0, 20.0])
    assert base.tolist() == [[11.0, 12.0], [23.0, 24.0]]


def test_inplace_on_a_stepped_slice_writes_through_to_the_base():
    base = pith.arange(6)
    view = base[::2]
    view.mul_(10)
    assert base.tolist() == [0, 1, 20, 3, 40, 5]


def test_inplace_cannot_broadcast_self():
    x = pith.ones(3)
    with pytest.raises(RuntimeError):
        x.add_(pith.ones(2, 3))
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_inplace_into_an_expanded_tensor_raises_like_torch():
    x = pith.zeros(1).expand(3)
    with pytest.raises(RuntimeError):
        x.add_(pith.tensor([1.0, 2.0, 3.0]))
    if torch is not None:
        with pytest.raises(RuntimeError):
            torch.zeros(1).expand(3).add_(torch.tensor([1.0, 2.0, 3.0]))


def test_inplace_float_into_int_raises():
    x = pith.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        x += 0.5
    assert x.tolist() == [1, 2]


# ---- integer division semantics ----------------------------------------------------------

@pytest.mark.parametrize("row", read_table("int_division.csv"),
                         ids=lambda r: f"{r['a']}_{r['b']}")
def test_negative_int_division_follows_floor_semantics(row):
    a, b = pith.tensor([int(row["a"])]), pith.tensor([int(row["b"])])
    assert (a // b).tolist() == [int(row["floor_divide"])]
    assert pith.floor_divide(a, b).tolist() == [int(row["floor_divide"])]
    assert (a % b).tolist() == [int(row["remainder"])]
    assert (a / b).dtype is pith.float32
    np.testing.assert_allclose((a / b).tolist(), [float(row["true_div"])], rtol=1e-6)


@pytest.mark.parametrize("name", INT_NAMES)
@given(data=st.data())
@PROPERTY
def test_int_floor_divide_and_remainder_of_any_sign_match_numpy(name, data):
    info = np.iinfo(name)
    a = data.draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=1, max_size=8))
    b = data.draw(st.lists(st.integers(int(info.min), int(info.max)).filter(bool),
                           min_size=len(a), max_size=len(a)))
    an, bn = np.array(a, dtype=name), np.array(b, dtype=name)
    ta, tb = to_pith(an, name), to_pith(bn, name)
    with np.errstate(all="ignore"):
        assert_values(ta // tb, np.floor_divide(an, bn), name)
        assert_values(ta % tb, np.remainder(an, bn), name)
    if torch is not None:
        assert_matches_torch(ta // tb, to_torch(an, name) // to_torch(bn, name))
        assert_matches_torch(ta % tb, to_torch(an, name) % to_torch(bn, name))


@pytest.mark.parametrize("name", ["int8", "int64"])
def test_int_min_floor_divided_by_minus_one_does_not_crash(name):
    low = int(np.iinfo(name).min)
    a = pith.tensor([low], dtype=getattr(pith, name))
    b = pith.tensor([-1], dtype=getattr(pith, name))
    if torch is not None:
        ta = torch.tensor([low], dtype=getattr(torch, name))
        tb = torch.tensor([-1], dtype=getattr(torch, name))
        assert (a // b).tolist() == (ta // tb).tolist()
        assert (a % b).tolist() == (ta % tb).tolist()
    else:
        assert (a % b).tolist() == [0]


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_float_remainder_takes_the_divisor_sign(name):
    a = np.array([5.5, -5.5, 5.5, -5.5, 0.0], dtype=name)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0], dtype=name)
    ta, tb = to_pith(a, name), to_pith(b, name)
    assert_values(ta % tb, np.remainder(a, b), name)
    assert_values(ta // tb, np.floor_divide(a, b), name)


@pytest.mark.parametrize("expr", ["a // b", "a % b", "a // 0", "a % 0",
                                  "pith.floor_divide(a, b)", "pith.remainder(a, b)"])
@pytest.mark.parametrize("name", INT_NAMES)
def test_integer_division_by_zero_raises(expr, name):
    a = pith.tensor([5, 1], dtype=getattr(pith, name))
    b = pith.tensor([1, 0], dtype=getattr(pith, name))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        eval(expr, {"a": a, "b": b, "pith": pith})
    if torch is not None:
        ta = torch.tensor([5, 1], dtype=getattr(torch, name))
        tb = torch.tensor([1, 0], dtype=getattr(torch, name))
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            eval(expr, {"a": ta, "b": tb, "pith": torch})


def test_inplace_integer_division_by_zero_raises():
    a = pith.tensor([4, 6])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a //= pith.tensor([2, 0])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a.remainder_(0)


def test_true_division_of_ints_by_zero_is_inf_and_nan():
    out = pith.tensor([1, -1, 0]) / pith.tensor([0, 0, 0])
    assert out.dtype is pith.float32
    got = out.tolist()
    assert got[0] == float("inf") and got[1] == float("-inf") and got[2] != got[2]


def test_float_floor_divide_by_zero_is_not_an_error():
    got = (pith.tensor([1.0, -1.0]) // pith.tensor([0.0, 0.0])).tolist()
    assert got == [float("inf"), float("-inf")]


# ---- pow ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["int8", "int32", "int64", "uint8"])
def test_int_pow_to_a_negative_scalar_power_raises(name):
    with pytest.raises(RuntimeError, match="negative integer powers"):
        pith.tensor([2, 3], dtype=getattr(pith, name)) ** -2


def test_int_pow_to_a_negative_power_of_one_and_minus_one_raises_like_torch():
    if torch is None:
        pytest.skip("torch is not installed")
    kind, _ = torch_outcome(lambda: torch.tensor([1, -1]) ** -1)
    if kind == "error":
        with pytest.raises(RuntimeError):
            pith.tensor([1, -1]) ** -1
    else:
        assert (pith.tensor([1, -1]) ** -1).tolist() == (torch.tensor([1, -1]) ** -1).tolist()


def test_int_pow_to_negative_tensor_powers_truncates_like_torch():
    out = pith.tensor([2, 1, -1, 3]) ** pith.tensor([-1, -2, -3, 1])
    assert out.dtype is pith.int64 and out.tolist() == [0, 1, -1, 3]
    if torch is not None:
        ref = torch.tensor([2, 1, -1, 3]) ** torch.tensor([-1, -2, -3, 1])
        assert out.tolist() == ref.tolist()


def test_bool_tensor_to_a_bool_scalar_power_is_bool_like_torch():
    out = pith.tensor([True, False]) ** False
    assert out.dtype is pith.bool and out.tolist() == [True, True]


def test_float16_division_by_a_python_float_is_not_rounded_to_float16_first():
    # 1 / 65520: float16(65520) is inf, so rounding first would give 0.
    out = pith.ones(3, dtype=pith.float16) / 65520.0
    assert out.dtype is pith.float16 and out.tolist() == [1.52587890625e-05] * 3
    if torch is not None:
        ref = torch.ones(3, dtype=torch.float16) / 65520.0
        assert ref.tolist() == out.tolist()


def test_zero_dim_int_operand_of_a_float16_op_is_not_rounded_to_float16_first():
    # 65520 overflows float16 (to inf) but not float32, torch's compute type here: 0 * 65520
    # is 0, not nan.
    out = pith.zeros(2, dtype=pith.float16) * pith.tensor(65520, dtype=pith.int32)
    assert out.dtype is pith.float16 and out.tolist() == [0.0, 0.0]
    if torch is not None:
        ref = torch.zeros(2, dtype=torch.float16) * torch.tensor(65520, dtype=torch.int32)
        assert ref.tolist() == [0.0, 0.0]


def test_pow_of_int_by_float_scalar_is_float():
    out = pith.tensor([4, 9]) ** 0.5
    assert out.dtype is pith.float32 and out.tolist() == [2.0, 3.0]


def test_scalar_base_to_tensor_power():
    out = 2 ** pith.tensor([0, 1, 10])
    assert out.dtype is pith.int64 and out.tolist() == [1, 2, 1024]


@given(data=st.data())
@PROPERTY
def test_float_pow_matches_numpy(data):
    name = data.draw(st.sampled_from(FLOAT_NAMES), "dtype")
    shape = data.draw(shapes, "shape")
    tb, b = data.draw(tensors(name, shape, lo=-3, hi=3), "exponent")
    ta, a = data.draw(tensors(name, shape, lo=0.125, hi=8), "base")
    compute = "float32" if name in ("float16", "bfloat16") else name
    with np.errstate(all="ignore"):
        expected = np.power(a.astype(compute), b.astype(compute))
    expected = round_to_bfloat16(expected) if name == "bfloat16" else expected.astype(
        np_dtype(name))
    assert_values(ta ** tb, expected, name, rtol=4e-6 if name == "float32" else None)
