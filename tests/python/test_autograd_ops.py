"""The autograd of every differentiable overload of the op file, with PyTorch as the oracle.

The overloads come from the op file through the generator's own plan (gen_autograd.Plan,
over the rows that tests/python/test_derivatives_table.py loads with gen_ops.py): every
overload with formulas, every in-place form that records, and every composite implicit
overload with a Tensor input. The samples are the formula test's (SAMPLES and
IN_PLACE_SAMPLES there: broadcast and 0-dim ones where the op takes them; an in-place form
takes its functional overload's where torch takes them in place) and COMPOSITE_SAMPLES
below. Each sample also runs with its differentiable inputs laid out with every stride
doubled (non-contiguous); and once per overload, where torch takes it, a sample is emptied
(dim 0 of size 0, or EMPTY_SAMPLES) and one made 0-dim. For each overload:
  - the gradients of pith.autograd.grad equal torch.autograd.grad's on the same values;
  - the grad_fn of its first differentiable output has torch's class name;
  - the gradients made with create_graph=True require grad where torch's do (double
    backward starts there, and gradcheck cannot see one that lost its graph);
  - pith.autograd.gradcheck in float64 gives torch.autograd.gradcheck's verdict: it passes,
    except on the samples that sit on a kink or a tie, where both fail;
  - gradgradcheck on its first sample gives torch's verdict;
every out= form refuses an input that requires grad, with torch's error; and indexing from
Python records as torch's. KNOWN and KNOWN_INDEXING list what pith gets wrong today, each as
a strict xfail with the reason.
"""
import functools
import gc

import pytest

torch = pytest.importorskip("torch")

import pith  # noqa: E402
import test_derivatives_table as table  # noqa: E402

GEN, ROWS, BY_NAME = table.GEN, table.ROWS, table.BY_NAME
PLAN = GEN.gen_autograd.Plan(ROWS, GEN.fail)
r = table.r

# ---- the overloads -----------------------------------------------------------------------

def has_tensor_input(row):
    return any(GEN.gen_derivatives.token_kind(token) in ("tensor", "tensors")
               for token, _ in row.schema.args)


RECORDING = {row.schema.full_name: (row, form, d) for row, form, d in PLAN.kernels
             if form != "out"}
COMPOSITE = {row.schema.full_name: row for row in PLAN.composite
             if not row.schema.mutates and has_tensor_input(row)}
OUT_FORMS = [row.schema.full_name for row, form, _ in PLAN.kernels if form == "out"] + \
    [row.schema.full_name for row in PLAN.composite if row.schema.mutates]
OVERLOADS = sorted(RECORDING) + sorted(COMPOSITE)

# Composite implicit overloads: their gradient comes from the ops they call.
ties = table.ties
COMPOSITE_SAMPLES = {
    "contiguous": [{"self": r(4, 3).t()}, {"self": r(3, 4)}, {"self": r()}],
    "max.other": [{"self": r(3, 4), "other": r(4)}, {"self": ties, "other": ties.flip(1)}],
    "min.other": [{"self": r(3, 4), "other": r(4)}, {"self": r(), "other": r(3)}],
    "var": [{"self": r(3, 4)}, {"self": r(5), "unbiased": False}],
    "var.dim": [{"self": r(3, 4), "dim": [1]}, {"self": r(2, 3, 4), "dim": [0, 2],
                                                "unbiased": False, "keepdim": True}],
    "std": [{"self": r(3, 4)}, {"self": r(5), "unbiased": False}],
    "std.dim": [{"self": r(3, 4), "dim": [0]}, {"self": r(2, 3, 4), "dim": [-1],
                                                "keepdim": True}],
    "reshape": [{"self": r(3, 4), "shape": [2, -1]}, {"self": r(4, 3).t(), "shape": [12]},
                {"self": r(), "shape": [1, 1]}],
    "broadcast_to": [{"self": r(3, 1), "size": [2, 3, 4]}, {"self": r(), "size": [3]}],
    "expand_as": [{"self": r(4), "other": r(3, 4)}, {"self": r(), "other": r(2)}],
    "broadcast_tensors": [{"tensors": [r(3, 1), r(4), r()]}],
    "flatten.using_ints": [{"self": r(2, 3, 4)}, {"self": r(2, 3, 4), "start_dim": 1},
                           {"self": r()}],
    "narrow": [{"self": r(3, 5), "dim": 1, "start": 1, "length": 3},
               {"self": r(4, 3), "dim": 0, "start": -2, "length": 2}],
    "split.sizes": [{"self": r(5, 3), "split_size": [2, 3]},
                    {"self": r(3, 4), "split_size": [1, 3], "dim": 1}],
    "chunk": [{"self": r(5, 3), "chunks": 2}, {"self": r(3, 4), "chunks": 3, "dim": -1}],
    "stack": [{"tensors": [r(2, 3), r(2, 3)]}, {"tensors": [r(3), r(3), r(3)], "dim": 1},
              {"tensors": [r(), r()]}],
    "nonzero_numpy": [{"self": table.with_zeros}],
    "index_put": [{"self": r(4, 3), "indices": [torch.tensor([0, 2])], "values": r(3)},
                  {"self": r(4, 3), "indices": [torch.tensor([0, 2, 0])], "values": r(3, 3),
                   "accumulate": True}],
    "repeat_interleave.self_Tensor": [
        {"self": r(2, 3), "repeats": torch.tensor([1, 0, 2]), "dim": 1},
        {"self": r(3), "repeats": torch.tensor(2)}],
    "outer": [{"self": r(3), "vec2": r(4)}],
    "ger": [{"self": r(2), "vec2": r(3)}],
    "meshgrid": [{"tensors": [r(3), r(2)]}],
    "meshgrid.indexing": [{"tensors": [r(3), r(2)], "indexing": "xy"},
                          {"tensors": [r(2), r(3), r(1)], "indexing": "ij"}],
    "einsum": [{"equation": "ij,jk->ik", "tensors": [r(2, 3), r(3, 4)]},
               {"equation": "bij,bj->bi", "tensors": [r(2, 3, 4), r(2, 4)]},
               {"equation": "ii->i", "tensors": [r(3, 3)]}],
}


# The in-place comparisons record a node whose gradients are zeros (inplace = "zeros" in the
# op file's derivatives section), as torch's EqBackward1 and the like.
COMPARISON_SAMPLES = {f"{op}_.Tensor": [{"self": r(3, 4), "other": r(4)},
                                        {"self": ties, "other": ties.flip(1)}]
                      for op in ("eq", "ne", "lt", "le", "gt", "ge")}


def test_every_composite_overload_has_samples():
    assert sorted(COMPOSITE_SAMPLES) == sorted(COMPOSITE)


def test_every_overload_is_differentiable_or_says_why():
    """The plan accounts for every overload: it records, is composite, refuses (out=), or
    has no gradient with a reason."""
    accounted = set(RECORDING) | set(COMPOSITE) | set(OUT_FORMS) | \
        {row.schema.full_name for row, _ in PLAN.skipped} | \
        {row.schema.full_name for row in PLAN.composite} | \
        {row.schema.full_name for row in PLAN.not_implemented}
    assert accounted == set(BY_NAME)


def samples_of(overload):
    """The samples of an overload as given (contiguous unless the sample says otherwise)."""
    if overload in COMPOSITE:
        return COMPOSITE_SAMPLES[overload]
    if overload in COMPARISON_SAMPLES:
        return COMPARISON_SAMPLES[overload]
    row, form, d = RECORDING[overload]
    if form == "functional" or d.overload == overload:
        return table.SAMPLES[overload]
    if overload in table.IN_PLACE_SAMPLES:
        return table.IN_PLACE_SAMPLES[overload]
    return table.SAMPLES[d.overload]


# ---- calling an overload in pith and in torch ---------------------------------------------

def pith_value(value):
    """A sample's value in pith: a tensor keeps its strides (as_strided reads them)."""
    if isinstance(value, torch.Tensor):
        out = pith.from_numpy(value.detach().numpy().copy())
        if not value.is_contiguous():
            strided = pith.empty_strided(tuple(value.shape), value.stride(), dtype=out.dtype)
            strided.copy_(out)
            out = strided
        return out
    if isinstance(value, torch.dtype):
        return getattr(pith, str(value).replace("torch.", ""))
    if isinstance(value, list):
        return [pith_value(v) for v in value]
    return value


def pith_call(row, values):
    """Calls pith's overload with {argument: value} (defaults filled), as torch_call."""
    schema = row.schema
    full = {n: values[n] if n in values else table.default_of(schema, n) for _, n in schema.args}
    op = getattr(getattr(pith.ops.pith, schema.base), schema.overload or "default")
    positional = [full[n] for _, n in schema.args if n not in schema.keyword_names]
    keywords = {n: full[n] for _, n in schema.args if n in schema.keyword_names}
    return op(*positional, **keywords)


def torch_has(row):
    packet = getattr(torch.ops.aten, row.schema.base, None)
    return row.schema.full_name in table.ADAPTERS or (
        packet is not None and hasattr(packet, row.schema.overload or "default"))


def outputs_of(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def differentiable_inputs(overload):
    """The argument names whose floating tensors are the leaves."""
    if overload in COMPOSITE:
        row = COMPOSITE[overload]
        return [n for token, n in row.schema.args
                if GEN.gen_derivatives.token_kind(token) in ("tensor", "tensors")]
    _, _, d = RECORDING[overload]
    return [k for k, f in d.formulas.items() if f is not False]


def laid_out(lib, value, layout):
    """A leaf of `lib` with value's values: contiguous, or with every stride doubled."""
    x = value.detach().clone() if lib is torch else pith_value(value)
    if layout == "strided" and x.dim() and x.numel() > 1:
        strides, step = [], 2
        for size in reversed(x.shape):
            strides.insert(0, step)
            step *= max(size, 1)
        wide = lib.empty_strided(tuple(x.shape), tuple(strides), dtype=x.dtype)
        wide.copy_(x)
        x = wide
    return x.requires_grad_()


class Case:
    """One sample of one overload, callable in pith and in torch on leaves of either."""

    def __init__(self, overload, values, layout="contiguous"):
        self.overload, self.values, self.layout = overload, values, layout
        self.row = BY_NAME[overload]
        self.inplace = GEN.gen_autograd.is_inplace(self.row)
        # torch lacks some in-place forms (maximum_): there its functional op is the oracle
        self.torch_row = self.row if torch_has(self.row) else self.row.functional
        names = differentiable_inputs(overload)
        self.slots = []  # (name, index in its list or None) of each leaf
        for name in names:
            value = values.get(name)
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                self.slots.append((name, None))
            elif isinstance(value, list):
                self.slots += [(name, i) for i, v in enumerate(value)
                               if isinstance(v, torch.Tensor) and v.is_floating_point()]

    def __repr__(self):
        shapes = {k: (tuple(v.shape) if isinstance(v, torch.Tensor) else
                      [tuple(t.shape) if t is not None else None for t in v]
                      if isinstance(v, list) and v and not isinstance(v[0], int) else v)
                  for k, v in self.values.items()}
        return f"{self.overload}({shapes}, {self.layout})"

    def arguments(self, lib):
        """The sample's values in `lib` (pith's are made per use, never cached: the leak
        check counts live tensors around each test)."""
        return dict(self.values) if lib is torch else \
            {k: pith_value(v) for k, v in self.values.items()}

    def leaves(self, lib):
        return [laid_out(lib, self.values[n] if i is None else self.values[n][i], self.layout)
                for n, i in self.slots]

    def function(self, lib, single_op=False):
        """fn(*leaves) -> the overload's result (an in-place form runs on a clone of self);
        single_op: in torch, by the one op of SINGLE_OP where the formula test's adapter
        composes several."""
        others = self.arguments(lib)

        def fn(*leaves):
            values = dict(others)
            for (name, i), leaf in zip(self.slots, leaves):
                if i is None:
                    values[name] = leaf
                else:
                    values[name] = list(values[name])
                    values[name][i] = leaf
            for token, name in self.row.schema.args:
                if token == "OPT_GENERATOR":  # the same samples at every call
                    values[name] = lib.Generator().manual_seed(0)
            if self.inplace:
                values["self"] = values["self"].clone()
            if lib is torch and single_op and self.overload in SINGLE_OP:
                return SINGLE_OP[self.overload](values)
            if lib is torch:
                return table.torch_call(self.torch_row, values)
            return pith_call(self.row, values)
        return fn

    def run(self, lib, single_op=False):
        leaves = self.leaves(lib)
        return leaves, outputs_of(self.function(lib, single_op)(*leaves))


# aten has prod.dim_int only: the formula test's adapter for prod.dim_IntList reshapes after
# it, so its last node is a view; one dim is aten's own op.
SINGLE_OP = {"prod.dim_IntList": lambda v: torch.prod(v["self"], v["dim"][0],
                                                      keepdim=v.get("keepdim", False))
             if len(v.get("dim") or []) == 1 else table.torch_call(BY_NAME["prod.dim_IntList"], v)}


def torch_accepts(case):
    """Whether torch runs the case forward and backward (in place: into self's shape, as
    the functional op it stands in with does not check)."""
    try:
        if case.overload in SINGLE_OP:
            case.run(torch, single_op=True)
        leaves, outs = case.run(torch)
        if case.inplace and case.torch_row is not case.row and \
                outs[0].shape != case.values["self"].shape:
            return False
        diff = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
        if diff:
            torch.autograd.grad(diff, leaves, [torch.ones_like(o) for o in diff],
                                allow_unused=True)
        return True
    except (RuntimeError, IndexError, ValueError):
        return False


def emptied(values, slots):
    """The sample with dim 0 of its first leaf (of >= 1 dim) made 0, and that of every other
    tensor argument of the same rank and dim 0; None when no leaf has a dim."""
    first = next((values[n] if i is None else values[n][i] for n, i in slots
                  if (values[n] if i is None else values[n][i]).dim()), None)
    if first is None:
        return None

    def cut(v):
        if isinstance(v, torch.Tensor) and v.dim() == first.dim() and \
                v.shape[0] == first.shape[0]:
            return v[:0]
        if isinstance(v, list):
            return [cut(item) for item in v]
        return v
    return {k: cut(v) for k, v in values.items()}


def scalars(values, slots):
    """The sample with every tensor argument replaced by its first element, 0-dim; None
    when there is no leaf of >= 1 dim or one is empty."""
    leaves = [values[n] if i is None else values[n][i] for n, i in slots]
    if not any(v.dim() for v in leaves) or any(v.numel() == 0 for v in leaves):
        return None

    def first(v):
        if isinstance(v, torch.Tensor):
            return v.reshape(-1)[0].clone() if v.numel() else v
        if isinstance(v, list):
            return [first(item) for item in v]
        return v
    return {k: first(v) for k, v in values.items()}


# Empty samples of the overloads whose sizes are arguments (emptied() cuts tensors only).
EMPTY_SAMPLES = {
    "as_strided": [{"self": r(3, 4), "size": [0, 2], "stride": [1, 2]}],
    "embedding": [{"weight": r(5, 3), "indices": torch.zeros(0, dtype=torch.int64)}],
    "expand": [{"self": r(0, 1), "size": [2, 0, 4]}],
    "view": [{"self": r(0, 4), "size": [2, 0]}],
    "broadcast_to": [{"self": r(0, 1), "size": [0, 3]}],
    "split_with_sizes": [{"self": r(0, 3), "split_sizes": [0]}],
    "index_put": [{"self": r(4, 3), "indices": [torch.zeros(0, dtype=torch.int64)],
                   "values": r(0, 3)}],
}


def cases_of(overload):
    """Every sample as given and strided, then, once each where torch takes it, an emptied
    sample and a 0-dim one."""
    cases = []
    for values in samples_of(overload):
        for layout in ("contiguous", "strided"):
            case = Case(overload, values, layout)
            if torch_accepts(case):
                cases.append(case)
    for variant in (emptied, scalars):
        candidates = [variant(values, Case(overload, values).slots)
                      for values in samples_of(overload)]
        if variant is emptied:
            candidates += EMPTY_SAMPLES.get(overload, [])
        for values in candidates:
            if values is not None and torch_accepts(Case(overload, values)):
                cases.append(Case(overload, values))
                break
    assert cases, f"torch takes no sample of {overload}"
    return cases


_CASES = {}


def cached_cases(overload):
    if overload not in _CASES:
        _CASES[overload] = cases_of(overload)
    return _CASES[overload]


# ---- what pith gets wrong today ------------------------------------------------------------

# (check, overload) -> reason; check is "grads", "name", "gradcheck", "gradgradcheck",
# "create_graph" or "out".
DECOMPOSED = ("torch decomposes {} and names the node of its last part ({}); pith records one "
              "node, {}, declared in the op file")
KNOWN = {}
KNOWN[("create_graph", "as_strided")] = (
    "as_strided to an empty size: pith's gradient made with create_graph=True requires grad, "
    "torch's does not (its as_strided_backward returns plain zeros for an empty output); "
    "both are zeros")
KNOWN[("name", "linear")] = DECOMPOSED.format("linear", "AddmmBackward0, MvBackward0, ... by "
                                              "shape", "LinearBackward0")
KNOWN[("name", "matmul")] = DECOMPOSED.format("matmul", "MmBackward0, MvBackward0, "
                                              "UnsafeViewBackward0, ... by shape",
                                              "MatmulBackward0")
KNOWN[("name", "repeat_interleave.self_int")] = DECOMPOSED.format(
    "repeat_interleave.self_int", "ViewBackward0", "RepeatInterleaveBackward0")
KNOWN[("name", "stack")] = ("stack is composite implicit in the op file (unsqueeze, then cat), "
                            "so its node is CatBackward0; torch's is StackBackward0")
KNOWN[("name", "_scaled_dot_product_fused_attention")] = (
    "pith's own op (Note [Fused attention]): torch has none of its name, and the formula "
    "test's adapter composes it of torch ops; its node is named as that of torch's fused CPU "
    "kernel, ScaledDotProductFlashAttentionForCpuBackward0 (test_nn_attention_fused.py)")
KNOWN[("name", "_scaled_dot_product_attention_weights")] = (
    "pith's own op (Note [Fused attention]): torch has none of its name, and the formula "
    "test's adapter composes it of torch ops, the last an exp")
KNOWN[("name", "_layer_norm_backward_input")] = (
    "pith's own op (layer_norm's input gradient, kernels/normalisation.c): torch has none of "
    "its name, and the formula test's adapter composes it of torch ops, the last a mul")
KNOWN[("create_graph", "_ctc_loss")] = (
    "_ctc_loss_backward has no derivative in the op file (docs/training.md, Losses): pith's "
    "CTC gradient made with create_graph=True does not require grad; torch's does, and its "
    "backward raises 'derivative for aten::_ctc_loss_backward is not implemented'")
KNOWN[("gradgradcheck", "_ctc_loss")] = (
    "torch's gradgradcheck of _ctc_loss raises 'derivative for aten::_ctc_loss_backward is "
    "not implemented'; pith's CTC gradient records no graph (docs/training.md, Losses)")
KNOWN[("out", "stack.out")] = ("stack.out refuses through its part: the message names cat(), "
                               "torch's names stack()")


def known_failures(is_known):
    """A test decorator: where is_known(**the test's arguments), the test's failure is
    re-raised as its message alone. The frames of a traceback would keep the test's tensors
    alive into later tests, whose leak check (conftest) would then see them freed."""
    def decorate(test):
        @functools.wraps(test)
        def run(**kwargs):
            if not is_known(**kwargs):
                return test(**kwargs)
            failure = None
            try:
                test(**kwargs)
            except Exception as e:  # noqa: BLE001 (any failure is the known one)
                failure = f"{type(e).__name__}: {e}"
            if failure is not None:
                raise AssertionError(failure)
        return run
    return decorate


def params(check):
    return [pytest.param(o, marks=pytest.mark.xfail(strict=True, reason=KNOWN[(check, o)]))
            if (check, o) in KNOWN else o for o in OVERLOADS]


# ---- the checks ----------------------------------------------------------------------------

def grad_outputs(outs, seed=3):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o in outs]


def outs_as_torch(outs):
    """Stand-ins with the shapes and dtypes of outs (grad_outputs draws from them)."""
    return [torch.empty(tuple(o.shape), dtype=getattr(torch, str(o.dtype).split(".")[-1]))
            for o in outs]


def differentiable(outs):
    return [o for o in outs if isinstance(o, (torch.Tensor, pith.Tensor)) and o.requires_grad]


@pytest.mark.parametrize("overload", params("grads"))
@known_failures(lambda overload: ("grads", overload) in KNOWN)
def test_gradients_equal_torchs(overload):
    for case in cached_cases(overload):
        t_leaves, t_outs = case.run(torch)
        p_leaves, p_outs = case.run(pith)
        assert [o.requires_grad for o in p_outs] == [o.requires_grad for o in t_outs], case
        t_diff, p_diff = differentiable(t_outs), differentiable(p_outs)
        if not t_diff:
            continue
        gs = grad_outputs(t_diff)
        want = torch.autograd.grad(t_diff, t_leaves, gs, allow_unused=True)
        got = pith.autograd.grad(p_diff, p_leaves, [pith_value(g) for g in gs],
                                 allow_unused=True)
        for k, (w, g, leaf) in enumerate(zip(want, got, t_leaves)):
            w = torch.zeros_like(leaf) if w is None else w
            g = torch.zeros_like(leaf) if g is None else torch.from_numpy(g.numpy().copy())
            torch.testing.assert_close(g, w, rtol=1e-7, atol=1e-9, equal_nan=True,
                                       msg=lambda m: f"{case} d/d leaf {k}: {m}")


def node_name(outs):
    for o in outs:
        if getattr(o, "grad_fn", None) is not None:
            return o.grad_fn.name().rpartition("::")[2]
    return None


@pytest.mark.parametrize("overload", params("name"))
@known_failures(lambda overload: ("name", overload) in KNOWN)
def test_grad_fn_is_named_as_torchs(overload):
    case = cached_cases(overload)[0]
    assert node_name(case.run(pith)[1]) == node_name(case.run(torch, single_op=True)[1]), case


@pytest.mark.parametrize("overload", params("create_graph"))
@known_failures(lambda overload: ("create_graph", overload) in KNOWN)
def test_gradients_made_with_create_graph_require_grad_as_torchs(overload):
    """Double backward starts here: gradcheck does not see a gradient that lost its graph
    when another gradient of the same call kept one (mul's, of a broadcast input)."""
    for case in cached_cases(overload):
        requires = []
        for lib in (torch, pith):
            leaves, outs = case.run(lib)
            diff = differentiable(outs)
            if not diff:
                break
            gs = [g.requires_grad_() for g in grad_outputs(outs_as_torch(diff))]
            if lib is pith:
                gs = [pith_value(g.detach()).requires_grad_() for g in gs]
            grads = lib.autograd.grad(diff, leaves, gs, create_graph=True, allow_unused=True)
            requires.append([g is not None and g.requires_grad for g in grads])
        if requires:
            assert requires[1] == requires[0], case


def verdict(lib, check, case, **kwargs):
    fn = case.function(lib)
    leaves = case.leaves(lib)
    return check(lib)(fn, tuple(leaves), raise_exception=False, **kwargs)


@pytest.mark.parametrize("overload", params("gradcheck"))
@known_failures(lambda overload: ("gradcheck", overload) in KNOWN)
def test_gradcheck_gives_torchs_verdict(overload):
    for case in cached_cases(overload):
        expected = verdict(torch, lambda lib: lib.autograd.gradcheck, case)
        if expected:  # raise, so that a failure shows pith's message
            assert pith.autograd.gradcheck(case.function(pith), tuple(case.leaves(pith))), case
        else:
            assert not verdict(pith, lambda lib: lib.autograd.gradcheck, case), case


@pytest.mark.filterwarnings("ignore:Input #1 requires gradient and is not a double")
@pytest.mark.parametrize("overload", params("gradgradcheck"))
@known_failures(lambda overload: ("gradgradcheck", overload) in KNOWN)
def test_gradgradcheck_gives_torchs_verdict(overload):
    case = cached_cases(overload)[0]
    outs = differentiable(case.run(torch)[1])
    if not outs:
        pytest.skip(f"{case}: torch gives no differentiable output (its gradgradcheck "
                    f"cannot take zero grad_outputs)")
    gs = [g.requires_grad_() for g in grad_outputs(outs, seed=5)]
    p_gs = tuple(pith_value(g).requires_grad_() for g in gs)
    expected = torch.autograd.gradgradcheck(case.function(torch), tuple(case.leaves(torch)),
                                            tuple(gs), raise_exception=False)
    check = pith.autograd.gradgradcheck
    if expected:
        assert check(case.function(pith), tuple(case.leaves(pith)), p_gs), case
    else:
        assert not check(case.function(pith), tuple(case.leaves(pith)), p_gs,
                         raise_exception=False), case


def out_names(row):
    return [n for token, n in row.schema.args
            if n in row.schema.keyword_names and token == "TENSOR"]


# torch's refusal, with the op's name before it: torch names an internal op for some
# (log_sigmoid_forward) and, for others, records a node that fails only at backward
# (relu.out), so its message for add.out stands for all.
OUT_REFUSAL = ("{}(): functions with out=... arguments don't support automatic "
               "differentiation, but one of the arguments requires grad.")


def test_the_out_refusal_is_torchs():
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        torch.ops.aten.add.out(x, x, out=torch.empty(2, dtype=torch.float64))
    assert str(info.value) == OUT_REFUSAL.format("add")


@pytest.mark.parametrize("overload", [
    pytest.param(o, marks=pytest.mark.xfail(strict=True, reason=KNOWN[("out", o)]))
    if ("out", o) in KNOWN else o for o in sorted(OUT_FORMS)])
@known_failures(lambda overload: ("out", overload) in KNOWN)
def test_an_out_form_refuses_an_input_that_requires_grad(overload):
    row = BY_NAME[overload]
    functional = row.functional or BY_NAME[row.derivative.target]
    case = cached_cases(functional.schema.full_name)[0]
    results = outputs_of(case.function(torch)(*case.leaves(torch)))
    values = case.arguments(pith)
    for (name, i), leaf in zip(case.slots, case.leaves(pith)):
        if i is None:
            values[name] = leaf
        else:
            values[name] = list(values[name])
            values[name][i] = leaf
    values.update({n: pith_value(o.detach()) for n, o in zip(out_names(row), results)})
    with pytest.raises(RuntimeError) as info:
        pith_call(row, values)
    assert str(info.value) == OUT_REFUSAL.format(row.schema.base)


@pytest.fixture(scope="module", autouse=True)
def frozen_gc():
    """One thread for torch, and cheap collections. The leak check (conftest) runs
    gc.collect() around each test, at a cost that grows
    with the objects that exist: the op file's rows and formulas, what the checks import on
    first use, and this module's several hundred items. Running each library's checks once,
    then moving everything to the permanent generation, keeps that cost near zero."""
    for lib in (torch, pith):
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        lib.autograd.gradgradcheck(lambda t: t * t, (x,), fast_mode=True)
        torch.testing.assert_close(torch.ones(1), torch.ones(1))
    del x
    gc.collect()
    gc.freeze()
    # torch's intra-op threads wait on each other when the machine is shared (softmax: 14 ms
    # a call at 2 threads, 0.1 ms at 1); these tensors are tiny.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ---- indexing from Python ------------------------------------------------------------------

def written(lib, t, index, value):
    out = t.clone()
    out[index] = value
    return out


# name -> fn(lib, t) on a (3, 4) leaf: Tensor.__getitem__ and __setitem__ (the binder's
# indexing, python_bindings/_C/indexing.c), which reach the ops without the op file's names.
INDEXING = {
    "int": lambda lib, t: t[1],
    "ints": lambda lib, t: t[1, 2],
    "slice": lambda lib, t: t[:, 1:],
    "step": lambda lib, t: t[::2],
    "ellipsis": lambda lib, t: t[..., 0],
    "none": lambda lib, t: t[None],
    "tensor": lambda lib, t: t[lib.tensor([0, 2, 2])],
    "mask": lambda lib, t: t[t > 0],
    "set_int": lambda lib, t: written(lib, t, 0, 5.0),
    "set_slice": lambda lib, t: written(lib, t, (slice(None), 1), 2.0),
    "set_tensor_value": lambda lib, t: written(lib, t, 1, t[0] * 2),
}
# Every key records as torch's (views through the dispatcher, x[key] = v through CopySlices:
# Note [Views and in-place], autograd/views.c); a defect found later goes here, with its
# reason, as a strict xfail.
KNOWN_INDEXING = {}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_INDEXING[n]))
    if n in KNOWN_INDEXING else n for n in INDEXING])
@known_failures(lambda name: name in KNOWN_INDEXING)
def test_indexing_records_as_torchs(name):
    x = r(3, 4)
    results = []
    for lib in (torch, pith):
        leaf = laid_out(lib, x, "contiguous")
        out = INDEXING[name](lib, leaf)
        gradient = None
        if out.requires_grad:
            g = grad_outputs(outs_as_torch([out]))[0]
            (gradient,) = lib.autograd.grad(out, leaf, g if lib is torch else pith_value(g))
            gradient = gradient.tolist()
        results.append((out.requires_grad, node_name([out]), gradient))
    assert results[1] == results[0]
