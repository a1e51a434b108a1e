"""Every kind of error reaches Python as the exception PyTorch raises, with the C library's
message: shape mismatches are RuntimeError (pith.PithError is a ValueError and a
RuntimeError), bad dims and indices IndexError, bad dtype arguments and wrong argument
types TypeError, autograd NotImplementedError. Each row of ERRORS is checked against pith
and, when installed, against torch (so the table itself is PyTorch's behaviour)."""
import pytest

import pith
from conftest import torch_or_none

torch = torch_or_none()

# (expression with M as the module, PyTorch's exception type, a fragment of the message)
ERRORS = [
    # shapes and values: RuntimeError
    ("M.ones(3) + M.ones(4)", RuntimeError, "must match the size of tensor b (4)"),
    ("M.ones(2).add_(M.ones(2, 2))", RuntimeError, "doesn't match the broadcast shape"),
    ("M.ones(2).view(3)", RuntimeError, "shape '[3]' is invalid for input of size 2"),
    ("M.ones(2).view(-1, -1)", RuntimeError, "only one dimension can be inferred"),
    ("M.ones(2, 3).t().view(6)", RuntimeError, "view size is not compatible"),
    ("M.ones(2, 3).reshape(4)", RuntimeError, "invalid for input of size 6"),
    ("M.ones(2, 3).expand(3, 3)", RuntimeError, "must match the existing size (2)"),
    ("M.ones(2, 2) @ M.ones(3, 3)", RuntimeError, "cannot be multiplied (2x2 and 3x3)"),
    ("M.ones(2).mm(M.ones(2))", RuntimeError, "must be a matrix"),
    ("M.cat([M.ones(2, 3), M.ones(2, 4)])", RuntimeError, "Sizes of tensors must match"),
    ("M.ones(3).split(0)", RuntimeError, "split_size can only be 0"),
    ("M.ones(3).chunk(0)", RuntimeError, "chunk expects `chunks` to be greater than 0"),
    ("M.ones(2, 3).flatten(1, 0)", RuntimeError, "start_dim cannot come after end_dim"),
    ("M.ones(2, 3).amax(dim=(0, 0))", RuntimeError, "appears multiple times"),
    ("M.arange(0, 10, 0)", RuntimeError, "step must be nonzero"),
    ("M.zeros(-1)", RuntimeError, "negative"),
    ("M.tensor([1, 2]) ** -1", RuntimeError, "Integers to negative integer powers"),
    ("M.tensor([1]) // M.tensor([0])", RuntimeError, "ZeroDivisionError"),
    ("M.tensor([1]) % M.tensor([0])", RuntimeError, "ZeroDivisionError"),
    # ops on a dtype they do not support: RuntimeError in PyTorch
    ("M.neg(M.tensor([True]))", RuntimeError, "Negation, the `-` operator, on a bool tensor"),
    ("M.ones(2) - M.tensor([True, False])", RuntimeError, "Subtraction, the `-` operator"),
    ("M.ones(2, dtype=M.int64).mean()", RuntimeError, "could not infer output dtype"),
    ("M.ones(2, dtype=M.int64).var()", RuntimeError, "only support floating point"),
    ("M.ones(2) & M.ones(2)", RuntimeError, "bitwise_and"),
    ("M.ones(2, dtype=M.int64).add_(0.5)", RuntimeError, "can't be cast to the desired output"),
    ("M.where(M.ones(2), M.ones(2), M.ones(2))", RuntimeError, "condition to be a boolean"),
    ("M.ones(2).index_select(0, M.tensor([0.5]))", RuntimeError, "int32 or int64 for index"),
    ("M.ones(2, 2) @ M.ones(2, 2, dtype=M.float64)", RuntimeError, "dtype"),
    # dims and indices: IndexError
    ("M.ones(2, 3).sum(dim=5)", IndexError, "Dimension out of range"),
    ("M.ones(2, 3).size(2)", IndexError, "expected to be in range of [-2, 1], but got 2"),
    ("M.ones(2, 3).transpose(0, 5)", IndexError, "Dimension out of range"),
    ("M.ones(2, 3).unsqueeze(5)", IndexError, "range of [-3, 2], but got 5"),
    ("M.ones(2, 3).select(3, 0)", IndexError, "Dimension out of range"),
    ("M.ones(2, 3).squeeze(3)", IndexError, "Dimension out of range"),
    ("M.ones(2, 3).max(dim=2)", IndexError, "Dimension out of range"),
    ("M.ones(2, 3).argmax(dim=5)", IndexError, "Dimension out of range"),
    ("M.ones(2, 3).softmax(4)", IndexError, "Dimension out of range"),
    ("M.tensor(1.0).sum(1)", IndexError, "Dimension out of range"),
    ("M.ones(2)[5]", IndexError, "index 5 is out of bounds for dimension 0 with size 2"),
    ("M.ones(2, 3)[0, 5]", IndexError, "out of bounds for dimension 1 with size 3"),
    ("M.ones(2)[0, 0]", IndexError, "too many indices for tensor of dimension 1"),
    ("M.ones(2).index_select(0, M.tensor([5]))", IndexError, "index out of range in self"),
    # bad dtype arguments: TypeError
    ("M.zeros(2, dtype='float32')", TypeError, "dtype"),
    ("M.tensor([1], dtype=M.Size)", TypeError, "dtype"),
    ("M.ones(2).sum(dtype=5)", TypeError, "dtype"),
    ("M.set_default_dtype(M.int64)", TypeError, "only floating-point types"),
    # wrong argument types and arity: TypeError
    ("M.ones('a')", TypeError, "size"),
    ("M.ones(2, 3).view('a')", TypeError, "str"),
    ("M.ones(2, 3).sum(dim='a')", TypeError, "dim"),
    ("M.ones(2, 3).transpose(0, 1.5)", TypeError, "transpose"),
    ("M.ones(2, 3).transpose(0)", TypeError, "dim1"),
    ("M.ones(2, 3).transpose(0, 1, 2)", TypeError, "positional argument"),
    ("M.ones(2, 3).narrow(0, 'a', 1)", TypeError, "narrow"),
    ("M.ones(2).sum(bogus=1)", TypeError, "bogus"),
    ("M.ones(2) + 'a'", TypeError, "unsupported operand type(s) for +"),
    ("M.add(M.ones(2), 'a')", TypeError, "add"),
    ("M.full((2,), 'a')", TypeError, ""),
    ("M.ones(2).var(correction='a')", TypeError, "correction"),
    ("M.ones(2).__index__()", TypeError, "can be converted to an index"),
    ("M.ones(2)['a']", TypeError, ""),
    # construction from bad data
    ("M.tensor([[1, 2], [3]])", ValueError, "expected sequence of length 2 at dim 1 (got 1)"),
    ("M.tensor(object())", RuntimeError, "object"),
    ("M.tensor([2**64])", ValueError, "Overflow"),
    # conversions of a tensor with several elements
    ("M.ones(2, 2).item()", RuntimeError, "a Tensor with 4 elements cannot be converted to Scalar"),
    ("bool(M.ones(2))", RuntimeError, "more than one value is ambiguous"),
    ("float(M.ones(2))", ValueError, "only one element tensors can be converted"),
    ("int(M.ones(2))", ValueError, "only one element tensors can be converted"),
]


def _id(row):
    return row[0].replace("M.", "").replace(" ", "")[:48]


@pytest.mark.parametrize("expr,exc,fragment", ERRORS, ids=[_id(r) for r in ERRORS])
def test_error_type_and_c_message_reach_python(expr, exc, fragment):
    with pytest.raises(exc) as info:
        eval(expr, {"M": pith})
    assert fragment in str(info.value)


@pytest.mark.parametrize("expr,exc,fragment", ERRORS, ids=[_id(r) for r in ERRORS])
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_torch_raises_the_same_type(expr, exc, fragment):
    """The table is PyTorch's behaviour (run against torch itself)."""
    if torch is None:
        pytest.skip("torch is not installed")
    with pytest.raises(exc):
        eval(expr, {"M": torch})


def test_pith_error_is_a_value_error_and_a_runtime_error():
    assert issubclass(pith.PithError, ValueError) and issubclass(pith.PithError, RuntimeError)
    assert issubclass(pith.InterpreterError, RuntimeError)
    with pytest.raises(pith.PithError):
        pith.ones(3) + pith.ones(4)


def test_the_c_message_names_the_operator():
    with pytest.raises(RuntimeError) as info:
        pith.ones(3).add(pith.ones(4))
    assert str(info.value).startswith("add")


@pytest.mark.parametrize("expr", ["M.ones(2, dtype=M.int64, requires_grad=True)",
                                  "M.tensor([1], requires_grad=True)",
                                  "M.ones(2, dtype=M.bool).requires_grad_()",
                                  "M.ones(2).backward()",
                                  "M.ones(2, requires_grad=True).backward()",
                                  "(M.ones(2, requires_grad=True) * 2).requires_grad_(False)"])
def test_autograd_errors_are_pytorchs(expr):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as want:
        eval(expr, {"M": torch})
    with pytest.raises(RuntimeError) as got:
        eval(expr, {"M": pith})
    assert str(got.value) == str(want.value)


def test_requires_grad_false_is_accepted():
    assert pith.ones(2, requires_grad=False).tolist() == [1.0, 1.0]
    assert pith.ones(2).requires_grad is False


def test_a_failed_call_leaves_no_error_behind():
    with pytest.raises(RuntimeError):
        pith.ones(3) + pith.ones(4)
    assert (pith.ones(3) + pith.ones(3)).tolist() == [2.0, 2.0, 2.0]
    assert pith.ones(2, 3).sum(1).tolist() == [3.0, 3.0]


def test_a_failed_in_place_call_leaves_self_unchanged():
    x = pith.tensor([1, 2])
    with pytest.raises((RuntimeError, TypeError)):
        x.add_(0.5)
    with pytest.raises(RuntimeError):
        x.add_(pith.ones(3, dtype=pith.int64))
    assert x.tolist() == [1, 2]


def test_errors_in_a_loop_do_not_crash_or_leak():
    before = pith._C._live_tensors()
    for _ in range(2000):
        try:
            pith.ones(3) + pith.ones(4)
        except RuntimeError:
            pass
    assert pith._C._live_tensors() == before


def test_pith_ops_errors_have_the_same_types():
    with pytest.raises(IndexError):
        pith.ops.pith.sum.dim_IntList(pith.ones(2), [3])
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        pith.ops.pith.add.Tensor(pith.ones(2), pith.ones(2), beta=2)
    with pytest.raises(RuntimeError):
        pith.ops.pith.add.Tensor(pith.ones(2), pith.ones(3))
