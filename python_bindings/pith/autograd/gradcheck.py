"""pith.autograd.gradcheck: gradcheck and gradgradcheck, as torch.autograd.gradcheck.

Slow mode compares the whole Jacobian, by central differences, with the one that
autograd.grad gives row by row; fast mode compares v^T J u for random unit vectors u and v
(PyTorch's fast gradcheck, pytorch/pytorch#53876). pith has no complex dtypes, sparse
layouts, vmap or forward-mode AD: the options that need them raise NotImplementedError.
"""
from itertools import product

from .. import _C, Generator, empty_strided, float64, no_grad, rand, stack, zeros, zeros_like
from .. import autograd as _autograd  # (the package, initialised by the time a check runs)

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]

_Tensor = _C.Tensor


class GradcheckError(RuntimeError):
    """Error raised by gradcheck and gradgradcheck."""


def _autograd_grad(outputs, inputs, grad_outputs, **kwargs):
    # pith.autograd.grad, looked up at each call (a caller may replace it).
    return _autograd.grad(outputs, inputs, grad_outputs, **kwargs)


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_float_tensor(x):
    return isinstance(x, _Tensor) and x.is_floating_point()


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _diff_inputs(inputs):
    return [(i, x) for i, x in enumerate(inputs) if isinstance(x, _Tensor) and x.requires_grad]


def _allclose(a, b, rtol, atol):
    """torch.allclose(a, b, rtol, atol) in the promoted dtype of a and b."""
    promoted = (a.new_zeros(1) + b.new_zeros(1)).dtype
    a, b = a.to(promoted), b.to(promoted)
    return bool(((a == b) | ((a - b).abs() <= atol + rtol * b.abs())).all())


def _max_abs(t):
    return t.abs().max().item() if t.numel() else 0.0


def _notallclose_msg(analytical, numerical, output_idx, input_idx):
    return (f"Jacobian mismatch for output {output_idx:d} with respect to input "
            f"{input_idx:d},\nnumerical:{numerical}\nanalytical:{analytical}\n")


# ---- the inputs and outputs ----------------------------------------------------------------

def _check_inputs(inputs):
    found = False
    for idx, inp in enumerate(inputs):
        if not (isinstance(inp, _Tensor) and inp.requires_grad):
            continue
        if inp.dtype != float64:
            import warnings
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                          "floating point or complex. This check will likely fail if all the "
                          "inputs are not of double precision floating point or complex. ",
                          stacklevel=3)
        if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck.")
        found = True
    if not found:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")


def _check_same_dtype_and_shape(a, b, eps, idx=None):
    on_index = f"on index {idx} " if idx is not None else ""
    if a.shape != b.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when "
                             f"inputs are perturbed {on_index}by {eps}, but got: shapes "
                             f"{a.shape} and {b.shape}.")
    if a.dtype != b.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when "
                             f"inputs are perturbed {on_index}by {eps}, but got: dtypes "
                             f"{a.dtype} and {b.dtype}.")


# ---- numerical derivatives -----------------------------------------------------------------

# Note [Perturbing copies of the inputs]
# PyTorch perturbs an input in place through `input.data`, whose version counter is its own.
# pith's version counter lives in the storage, which .data shares (docs/autograd.md), so
# writing through it would invalidate every tensor that the forward saved of that input.
# Finite differences therefore call `func` with a copy of the perturbed input (same sizes,
# strides and requires_grad, a storage of its own) in place of it: the inputs and their
# versions are left as they were. A `func` that reads an input through a closure, instead of
# its argument, sees no perturbation (in PyTorch it does).

class _Perturbed:
    """A copy of inputs[index] that finite differences write, and `func` called on it."""

    def __init__(self, func, inputs, index):
        x = inputs[index]
        self.func, self.inputs, self.index = func, inputs, index
        self.holder = empty_strided(tuple(x.size()), tuple(x.stride()), dtype=x.dtype)
        with no_grad():
            self.holder.copy_(x.detach())
        self.orig = x.detach().clone()
        self.requires_grad = x.requires_grad

    def outputs(self):
        arg = self.holder.detach().requires_grad_(self.requires_grad)
        args = tuple(arg if i == self.index else a for i, a in enumerate(self.inputs))
        return tuple(o.detach().clone() for o in _as_tuple(self.func(*args)))

    def central_difference(self, target, orig, delta, norm, check):
        """(f(x + delta) - f(x - delta)) / (2 norm), flattened, for each output: `target`
        is the holder or one of its elements, `orig` its original value."""
        with no_grad():
            target.copy_(orig - delta)
        before = self.outputs()
        with no_grad():
            target.copy_(orig + delta)
        after = self.outputs()
        with no_grad():
            target.copy_(orig)
        columns = []
        for a, b in zip(before, after):
            check(a, b)
            columns.append(((b - a) / (2 * norm)).reshape(-1))
        return columns


def _numerical_jacobian(func, inputs, func_out, which, index, eps):
    """(J of func_out[k] for k in which) with respect to inputs[index]: J[e] is the central
    difference along element e of that input, so J is (input numel, output numel)."""
    p = _Perturbed(func, inputs, index)
    columns = [[] for _ in which]
    for idx in product(*[range(s) for s in p.holder.size()]):
        entry = p.holder[idx]
        cols = p.central_difference(entry, entry.clone(), eps, eps,
                                    lambda a, b: _check_same_dtype_and_shape(a, b, eps, idx))
        for column, k in zip(columns, which):
            column.append(cols[k])
    return tuple(stack(column, 0) if column else
                 zeros((0, func_out[k].numel()), dtype=func_out[k].dtype)
                 for column, k in zip(columns, which))


def _numerical_jvp(func, inputs, index, u, eps):
    """(J u for each output) by one central difference along u (fast mode)."""
    p = _Perturbed(func, inputs, index)
    delta = u.reshape(tuple(p.holder.size())) * eps
    return p.central_difference(p.holder, p.orig, delta, eps,
                                lambda a, b: _check_same_dtype_and_shape(a, b, eps))


# ---- analytical derivatives ----------------------------------------------------------------

def _vjps(output, diff_inputs, grad_output):
    grads = _autograd_grad(output, diff_inputs, grad_output, retain_graph=True,
                           allow_unused=True)
    return [None if g is None else g.clone() for g in grads]


def _analytical_rows(output, diff_inputs):
    """rows[i][j]: the gradient of inputs i for the basis vector j of the output."""
    n = output.numel()
    rows = [[] for _ in diff_inputs]
    for j in range(n):
        basis = zeros(n, dtype=output.dtype)
        basis[j] = 1.0
        for i, g in enumerate(_vjps(output, diff_inputs, basis.reshape(tuple(output.shape)))):
            rows[i].append(g)
    return rows


def _stack_columns(rows, diff_inputs, width, check_grad_dtypes):
    """(input numel, width) Jacobians of the inputs' dtypes from rows[i][j] (None: zeros)."""
    jacobians = []
    for inp, gs in zip(diff_inputs, rows):
        for g in gs:
            if g is None:
                continue
            if g.size() != inp.size():
                raise GradcheckError("Analytical gradient has incorrect size")
            if g.dtype != inp.dtype and check_grad_dtypes:
                raise GradcheckError("Gradient has dtype mismatch")
        cols = [zeros(inp.numel(), dtype=inp.dtype) if g is None else
                g.reshape(-1).to(inp.dtype) for g in gs]
        jacobians.append(stack(cols, 1) if cols else zeros((inp.numel(), width),
                                                            dtype=inp.dtype))
    return jacobians


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def _analytical_jacobians(inputs, output, nondet_tol, check_grad_dtypes, v=None):
    """The analytical Jacobians of `output` with respect to each differentiable input: whole
    (slow mode) or v^T J (fast mode, v given), computed twice to check that backward is
    reentrant (deterministic)."""
    diff_inputs = [x for _, x in _diff_inputs(inputs)]
    results = []
    for _ in range(2):
        if v is None:
            rows, width = _analytical_rows(output, diff_inputs), output.numel()
        else:
            rows = [[g] for g in _vjps(output, diff_inputs, v.reshape(tuple(output.shape)))]
            width = 1
        results.append(_stack_columns(rows, diff_inputs, width, check_grad_dtypes))
    for j1, j2 in zip(*results):
        if j1.numel() and _max_abs(j1 - j2) > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                "gradient matches numerical gradient."
                f"The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG)
    return results[0]


# ---- slow mode -----------------------------------------------------------------------------

def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol):
    func_out = _as_tuple(func_out)
    diff = _diff_inputs(inputs)
    if not outputs:
        # No output is differentiable: the numerical gradient must be zero.
        floats = [k for k, o in enumerate(func_out) if _is_float_tensor(o)]
        for index, _ in diff:
            for jacobian in _numerical_jacobian(func, inputs, func_out, floats, index, eps):
                if bool((jacobian != 0).any()):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    # numerical[i][j]: output i with respect to differentiable input j
    keep = [k for k, o in enumerate(func_out) if _is_float_tensor(o) and o.requires_grad]
    numerical = list(zip(*[_numerical_jacobian(func, inputs, func_out, keep, index, eps)
                           for index, _ in diff]))
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobians(inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j))
    return True


# ---- fast mode -----------------------------------------------------------------------------

def _unit_vector(numel, dtype, generator):
    vec = rand(numel, generator=generator).to(dtype)
    return vec / (vec * vec).sum().sqrt()


FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


def _slow_mode_error(func, inputs, func_out, outputs, input_idx, output_idx, rtol, atol,
                     eps):
    """The slow-mode Jacobians of one pair, for the message of a fast-mode failure."""
    index = _diff_inputs(inputs)[input_idx][0]
    which = [k for k, o in enumerate(func_out) if o is outputs[output_idx]]
    numerical = _numerical_jacobian(func, inputs, func_out, which, index, eps)[0]
    analytical = _analytical_jacobians(inputs, outputs[output_idx], float("inf"),
                                       False)[input_idx]
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are "
           "computed \nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for "
           "more background \nabout fast mode. Below, we recompute numerical and analytical "
           "jacobians in slow mode:\n\n"
           f"Numerical:\n {numerical}\nAnalytical:\n{analytical}\n\n"
           f"The max per-element difference (slow mode) is: "
           f"{_max_abs(numerical.to(float64) - analytical.to(float64))}.\n")
    if _allclose(analytical, numerical, rtol, atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol):
    func_out = _as_tuple(func_out)
    diff = _diff_inputs(inputs)
    generator = Generator()  # its own, so that the caller's random state is left alone
    all_u = [_unit_vector(x.numel(), x.dtype, generator) for _, x in diff]
    all_v = [_unit_vector(o.numel(), o.dtype, generator) for o in outputs]
    if not outputs:
        for (index, _), u in zip(diff, all_u):
            for jvp in _numerical_jvp(func, inputs, index, u, eps):
                if jvp.numel() and _max_abs(jvp) > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    # numerical[i][j] = v_j^T J_ji u_i, for the differentiable outputs (PyTorch pairs v_j
    # with the j-th floating output, differentiable or not)
    keep = [k for k, o in enumerate(func_out) if _is_float_tensor(o) and o.requires_grad]
    numerical = []
    for (index, _), u in zip(diff, all_u):
        jvps = _numerical_jvp(func, inputs, index, u, eps)
        numerical.append([(v * jvps[k]).sum() for v, k in zip(all_v, keep)])
    analytical = []  # analytical[j][i]
    for o, v in zip(outputs, all_v):
        vjs = _analytical_jacobians(inputs, o, nondet_tol, check_grad_dtypes, v=v)
        analytical.append([(vj.reshape(-1) * u).sum() for vj, u in zip(vjs, all_u)])
    for i, per_output in enumerate(numerical):
        for j, n in enumerate(per_output):
            a = analytical[j][i]
            adjusted = atol * float(all_u[i].sum()) * float(all_v[j].sum())
            if not _allclose(a, n, rtol, adjusted):
                raise GradcheckError(
                    _notallclose_msg(a, n, j, i) +
                    _slow_mode_error(func, inputs, func_out, outputs, i, j, rtol, atol, eps))
    return True


# ---- the checks after the Jacobians --------------------------------------------------------

def _test_backward_mul_by_grad_output(outputs, inputs, masked):
    diff_inputs = [x for _, x in _diff_inputs(inputs)]
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    if not outputs:  # torch.autograd.grad gives None for each input; pith's raises
        return True
    grads = _autograd_grad(outputs, diff_inputs, [zeros_like(o) for o in outputs],
                           allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if masked:
            if not _allclose(gi, zeros_like(gi), 1e-05, 1e-08):
                raise GradcheckError("backward not multiplied by grad_output")
        elif not bool((gi == 0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")
    return True


# Note [Undefined output gradients in gradcheck]
# PyTorch's check_undefined_grad feeds each node an undefined gradient through
# torch._C._functions.UndefinedGrad. pith has no node that produces one, so the check is
# made with what the engine can do: all outputs' gradients zero (the input gradients must be
# None or zero), and, for a function of several differentiable outputs, backward from all
# of them but one, so that a node with several outputs gets no gradient for that one.

def _test_undefined_backward_mode(func, outputs, inputs):
    diff_inputs = [x for _, x in _diff_inputs(inputs)]
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")

    def warn_bc_breaking():
        import warnings
        warnings.warn("Backwards compatibility: New undefined gradient support checking "
                      "feature is enabled by default, but it may break existing callers of "
                      "this function. If this is true for you, you can call this function "
                      'with "check_undefined_grad=False" to disable the feature',
                      stacklevel=2)

    def check(output_to_check):
        if not output_to_check:
            return True
        try:
            grads = _autograd_grad(output_to_check, diff_inputs,
                                   [zeros_like(o) for o in output_to_check], allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from e
        for gi in grads:
            if gi is not None and not bool((gi == 0).all()):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads "
                    'are undefined or zero. Please look at "Notes about undefined output '
                    'gradients" in "tools/autograd/derivatives.yaml"')
        return True

    to_check = [[o for o in _differentiable_outputs(func(*inputs)) if isinstance(o, _Tensor)]]
    if len(to_check[0]) > 1:
        for skipped in range(len(outputs)):
            fresh = _differentiable_outputs(func(*inputs))
            to_check.append([o for k, o in enumerate(fresh) if k != skipped])
    return all(check(o) for o in to_check)


# ---- the entry points ----------------------------------------------------------------------

def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Checks the gradients that autograd computes for `func` at `inputs` (a Tensor or a
    tuple) against finite differences, for the inputs that are floating point and require
    grad, as torch.autograd.gradcheck. Returns True, or raises GradcheckError (returns False
    when raise_exception=False). The defaults suit float64 inputs. fast_mode compares random
    projections v^T J u instead of whole Jacobians."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to "
                             "be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")
    if check_forward_ad:
        raise NotImplementedError("gradcheck: check_forward_ad=True needs forward-mode AD, "
                                  "which pith does not have; pass check_forward_ad=False")
    if check_batched_grad:
        raise NotImplementedError("gradcheck: check_batched_grad=True needs vmap, which pith "
                                  "does not have; pass check_batched_grad=False")
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol,
                                 check_undefined_grad, check_grad_dtypes, fast_mode,
                                 bool(masked))
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                      check_grad_dtypes, fast_mode, masked):
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    check(func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes,
          nondet_tol)
    _test_backward_mul_by_grad_output(outputs, tupled_inputs, masked)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def _random_grad_output(x, noncontiguous):
    """A tensor like `x` (float64 when x is not floating) of values in [-1, 1) that
    requires grad; with noncontiguous, every other element of a wider tensor."""
    dtype = x.dtype if x.is_floating_point() else float64
    values = rand(tuple(x.shape), dtype=dtype) * 2 - 1
    if noncontiguous and values.numel() > 1:
        shape = tuple(x.shape)
        wide = zeros(shape[:-1] + (2 * shape[-1],), dtype=dtype)
        out = wide[..., ::2]
        out.copy_(values)
        values = out.detach()
    return values.requires_grad_()


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """Checks the gradients of the gradients of `func` (backward through backward) against
    finite differences, with respect to `inputs` and `grad_outputs` (random ones that require
    grad, when None), as torch.autograd.gradgradcheck."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or "
                             "check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev "
                             "to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to "
                             "be True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_random_grad_output(x, gen_non_contig_grad_outputs)
                                    for x in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    # gradcheck hands new_func copies of the inputs: which ones require grad is kept here.
    diff_input_args_indices = {i for i, x in enumerate(tupled_inputs)
                               if isinstance(x, _Tensor) and x.requires_grad}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs)
                                if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_args_indices else x
                           for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        grad_outputs = tuple(x.requires_grad_() if i in diff_grad_output_indices else x
                             for i, x in enumerate(args[-num_outputs:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args)
                                if i in diff_input_args_indices)
        grad_inputs = _autograd_grad(outputs, diff_input_args, grad_outputs,
                                     create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)
