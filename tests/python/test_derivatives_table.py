"""The derivatives table of the op file (Note [The derivatives section], ops/ops.toml), checked
against PyTorch before any autograd engine exists: every formula, parsed and resolved by the
generator's own reader (scripts/gen_derivatives.py), is evaluated with torch ops standing in
for pith's ops and Python references for the backward helpers, on random float64 samples
(broadcast and 0-dim ones where the op takes them), summed to each input's shape as the
engine will, and compared with torch.autograd.grad of the forward op. Needs torch only."""
import os

import pytest

from _scripts import load_script

torch = pytest.importorskip("torch")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


GEN = load_script("gen_ops")
_, ROWS = GEN.load()
BY_NAME = {row.schema.full_name: row for row in ROWS}
parse_formula = GEN.gen_derivatives.parse_formula


# ---- pith's ops as torch ops ---------------------------------------------------------------

def literal(node):
    tag = node[0]
    if tag == "list":
        return [literal(item) for item in node[1]]
    if tag in ("num", "str", "const"):
        return node[1]
    raise AssertionError(f"not a literal: {node}")


def default_of(schema, name):
    return literal(parse_formula(schema.defaults[name]))


def wrapped(value):
    """A number where a Tensor is expected: a 0-dim tensor (torch, as pith, lets a 0-dim
    tensor take no part in promotion within its category)."""
    if isinstance(value, torch.Tensor) or value is None:
        return value
    if isinstance(value, bool):
        return torch.tensor(value)
    return torch.tensor(value, dtype=torch.float64 if isinstance(value, float) else torch.int64)


def prod_dims(self, dim=None, keepdim=False, dtype=None):
    dims = range(self.dim()) if dim is None or dim == [] else [dim] if isinstance(dim, int) else dim
    out = self
    for d in sorted((d % max(self.dim(), 1) for d in dims), reverse=True):
        out = torch.prod(out, d, keepdim=True)
    if self.dim() == 0:
        return out
    return out if keepdim else out.reshape([s for i, s in enumerate(out.shape)
                                            if i not in {d % self.dim() for d in dims}])


def attention_scores(query, key, attn_mask, is_causal, scale):
    """What pith's fused attention ops softmax over, in torch ops."""
    scores = query @ key.transpose(-2, -1) * scale
    if is_causal:
        causal = torch.ones(scores.shape[-2:], dtype=torch.bool).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
    if attn_mask is not None:
        scores = (scores.masked_fill(attn_mask.logical_not(), float("-inf"))
                  if attn_mask.dtype == torch.bool else scores + attn_mask)
    return scores


def fused_attention(query, key, value, attn_mask, is_causal, scale):
    scores = attention_scores(query, key, attn_mask, is_causal, scale)
    return scores.softmax(-1) @ value, scores.logsumexp(-1)


def attention_weights(query, key, logsumexp, attn_mask, is_causal, scale):
    return (attention_scores(query, key, attn_mask, is_causal, scale) -
            logsumexp.unsqueeze(-1)).exp()


def layer_norm_backward_input(grad_out, input, normalized_shape, weight, eps):
    """pith's _layer_norm_backward_input (kernels/normalisation.c), layer_norm's input
    gradient, in differentiable torch ops; what layer_norm refuses, and a grad_out not of
    the input's shape, it refuses too."""
    torch.nn.functional.layer_norm(input.detach(), normalized_shape,
                                   None if weight is None else weight.detach(), None, eps)
    if grad_out.shape != input.shape:
        raise RuntimeError("expected grad_out of the input's shape")
    dims = list(range(-len(normalized_shape), 0))
    centered = input - input.mean(dims, keepdim=True)
    rstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = centered * rstd
    g = grad_out if weight is None else grad_out * weight
    return rstd * (g - g.mean(dims, keepdim=True) - xhat * (g * xhat).mean(dims, keepdim=True))


ADAPTERS = {
    "_layer_norm_backward_input": layer_norm_backward_input,
    # pith's own ops (See Note [Fused attention], kernels/attention.c), in torch ops
    "_scaled_dot_product_fused_attention": fused_attention,
    "_scaled_dot_product_attention_weights": attention_weights,
    # pith's schemas put keepdim before the keyword-only correction; aten's after
    "var.correction": lambda self, dim, keepdim, correction:
        torch.ops.aten.var.correction(self, dim, correction=correction, keepdim=keepdim),
    "std.correction": lambda self, dim, keepdim, correction:
        torch.ops.aten.std.correction(self, dim, correction=correction, keepdim=keepdim),
    "prod.dim_IntList": prod_dims,  # aten has prod.dim_int only
    # a wrapped number takes the dtype of the tensor it meets
    "index_put": lambda self, indices, values, accumulate:
        torch.ops.aten.index_put(self, indices, values.to(self.dtype), accumulate),
    "index_put_": lambda self, indices, values, accumulate:
        torch.ops.aten.index_put_(self, indices, values.to(self.dtype), accumulate),
}


def torch_call(row, values):
    """Calls the torch op of a pith overload with {argument: value} (defaults filled)."""
    schema = row.schema
    full = {}
    for token, name in schema.args:
        value = values[name] if name in values else default_of(schema, name)
        full[name] = wrapped(value) if token in ("TENSOR", "OPT_TENSOR") else value
    if schema.full_name in ADAPTERS:
        return ADAPTERS[schema.full_name](**full)
    packet = getattr(torch.ops.aten, schema.base)
    op = getattr(packet, schema.overload or "default")
    positional = [full[n] for _, n in schema.args if n not in schema.keyword_names]
    keywords = {n: full[n] for _, n in schema.args if n in schema.keyword_names}
    return op(*positional, **keywords)


# ---- the backward helpers, as Python references ----------------------------------------------

def storage_numel(t):
    return t.untyped_storage().nbytes() // t.element_size()


def reduced_sizes(t, dim):
    dims = (range(t.dim()) if dim is None or dim == [] else
            [dim] if isinstance(dim, int) else dim)
    dims = {d % t.dim() for d in dims} if t.dim() else set()
    return [1 if i in dims else s for i, s in enumerate(t.shape)]


def gather_indices(index, dim):
    if index.dim() == 0:
        return [index]
    d = dim % index.dim()
    out = []
    for k in range(index.dim()):
        shape = [1] * index.dim()
        shape[k] = -1
        out.append(index if k == d else torch.arange(index.shape[k]).view(shape))
    return out


def repeat_shape(t, repeats):
    padded = [1] * (len(repeats) - t.dim()) + list(t.shape)
    return [x for pair in zip(repeats, padded) for x in pair]


def invert_permutation(dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d % len(dims)] = i
    return inverse


HELPERS = {
    "sizes": lambda t: list(t.shape),
    "numel": lambda t: t.numel(),
    "ndim": lambda t: t.dim(),
    "zeros_like": lambda t: torch.zeros(t.shape, dtype=t.dtype),
    # the evaluator's tensors are never wrapped numbers: the helper is the identity on them
    "unwrapped": lambda t: t,
    "reduced_sizes": reduced_sizes,
    "invert_permutation": invert_permutation,
    "negated": lambda values: [-v for v in ([values] if isinstance(values, int) else values)],
    "sizes_along": lambda tensors, dim: [t.shape[dim] for t in tensors],
    "last_dims": lambda shape: list(range(-len(shape), 0)),
    "repeat_shape": repeat_shape,
    "tile_dims": lambda repeats: list(range(0, 2 * len(repeats), 2)),
    "index_along": lambda t, dim, index: [None] * (dim % t.dim()) + [index],
    "gather_indices": gather_indices,
    "slice_positions": lambda t, dim, start, end, step:
        torch.arange(*slice(start, end, step).indices(t.shape[dim])),
    "as_strided_positions": lambda t, size, stride, storage_offset: torch.as_strided(
        torch.arange(storage_numel(t)), size, stride,
        t.storage_offset() if storage_offset is None else storage_offset),
    "storage_positions": lambda t: torch.as_strided(
        torch.arange(storage_numel(t)), t.shape, t.stride(), t.storage_offset()),
    "storage_zeros": lambda t, like: torch.zeros(storage_numel(t), dtype=like.dtype),
}


def test_every_backward_helper_has_a_reference():
    with open(os.path.join(REPO, "ops", "ops.toml"), "rb") as f:
        helpers = GEN.tomllib.load(f)["backward_helper"]
    assert set(helpers) == set(HELPERS)


# ---- evaluating a formula --------------------------------------------------------------------

class Evaluator:
    def __init__(self, derivative, env):
        self.d, self.env = derivative, env
        self.lets = dict(derivative.lets)
        self.memo = {}

    def name(self, n):
        if n in self.lets:
            if n not in self.memo:
                self.memo[n] = self.eval(self.lets[n])
            return self.memo[n]
        return self.env[n]

    def eval(self, node):
        tag = node[0]
        if tag == "name":
            return self.name(node[1])
        if tag == "list":
            return [self.eval(item) for item in node[1]]
        if tag != "call":
            return node[1]
        if node[1] == "case":
            return self.case(node[2])
        target, bound = self.d.calls[id(node)]
        values = {p: self.eval(n) for p, n in bound.items()}
        if node[1] in HELPERS:
            schema = target.schema
            args = {}
            for token, p in schema.args:
                value = values[p] if p in values else default_of(schema, p)
                tensor = token == "TENSOR" and p not in target.metadata
                args[p] = wrapped(value) if tensor else value
            return HELPERS[node[1]](**args)
        return torch_call(target, values)

    def case(self, args):
        subject = self.eval(args[0])
        if isinstance(subject, torch.Tensor):  # an optional Tensor: only None matches None
            subject = object()
        pairs = args[1:]
        for i in range(0, len(pairs) - 1, 2):
            if subject == literal(pairs[i]):
                return self.eval(pairs[i + 1])
        assert len(pairs) % 2 == 1, "no case matched and no default"
        return self.eval(pairs[-1])


def summed_to(g, like):
    """What the engine does with a gradient: sum it to the input's shape, cast it to its dtype."""
    while g.dim() > like.dim():
        g = g.sum(0)
    for i, size in enumerate(like.shape):
        if size == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdim=True)
    assert g.shape == like.shape, (g.shape, like.shape)
    return g.to(like.dtype)


def outputs_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check_formulas(overload, args, formulas_of=None):
    """Evaluates the formulas of `formulas_of` (default: the overload's own entry) on `args`
    and compares them with torch.autograd.grad of the overload."""
    row = BY_NAME[overload]
    d = BY_NAME[formulas_of or overload].derivative
    assert d.kind == "formula", (overload, d.kind)
    inputs = {k: args[k] for k, f in d.formulas.items() if f is not False and k in args and
              args[k] is not None}
    leaves, call_args = {}, dict(args)
    for k, v in inputs.items():
        if isinstance(v, list):
            leaves[k] = [t.detach().requires_grad_() for t in v]
            call_args[k] = leaves[k]
        else:
            leaves[k] = v.detach().requires_grad_()
            call_args[k] = leaves[k]
    mutated = {n for _, n in row.schema.args if row.schema.mutates and n == "self"}
    for k in mutated:
        call_args[k] = call_args[k].clone()  # an in-place op on a copy of the leaf
    out = outputs_list(torch_call(row, call_args))
    results, grads, names = GEN.gen_derivatives.outputs_of(BY_NAME[formulas_of or overload])
    differentiable = d.differentiable_outputs or names
    gen = torch.Generator().manual_seed(7)
    grad_outputs = [torch.randn(o.shape, dtype=o.dtype, generator=gen)
                    if o.is_floating_point() else None for o in out]
    pairs = [(o, g) for o, g, n in zip(out, grad_outputs, names if len(names) == len(out) else
                                       names * len(out)) if n in differentiable]
    flat = [t for v in leaves.values() for t in (v if isinstance(v, list) else [v])]
    expected = torch.autograd.grad([o for o, _ in pairs], flat, [g for _, g in pairs],
                                   allow_unused=True)
    env = {n: default_of(row.schema, n) for _, n in row.schema.args if n not in args}
    env.update({k: (v.detach() if isinstance(v, torch.Tensor) else v) for k, v in args.items()})
    detached = [o.detach() for o in out]
    if grads == ["grads"]:
        env["grads"] = grad_outputs
    else:
        env.update(zip(grads, grad_outputs))
        env.update(zip(results, detached))
    evaluator = Evaluator(d, env)
    i = 0
    for k, leaf in leaves.items():
        got = evaluator.eval(d.formulas[k])
        for j, t in enumerate(leaf if isinstance(leaf, list) else [leaf]):
            want = expected[i]
            i += 1
            g = got[j] if isinstance(leaf, list) else got
            want = torch.zeros_like(t) if want is None else want
            torch.testing.assert_close(summed_to(g, t), want, rtol=1e-7, atol=1e-9,
                                       msg=lambda m: f"{overload} d/d {k}: {m}")


# ---- samples -------------------------------------------------------------------------------

def r(*shape, low=-2.0, high=2.0, seed=[0]):
    seed[0] += 1
    g = torch.Generator().manual_seed(seed[0])
    return torch.rand(shape, dtype=torch.float64, generator=g) * (high - low) + low


def pos(*shape):
    return r(*shape, low=0.5, high=3.0)


def ints(high, *shape, seed=[100]):
    seed[0] += 1
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed[0]))


def unary(domain=r):
    return [{"self": domain(3, 4)}, {"self": domain()}]


def binary(a=r, b=r, **extra):
    return [{"self": a(3, 4), "other": b(4), **extra}, {"self": a(), "other": b(3), **extra},
            {"self": a(2, 1, 3), "other": b(4, 1)}]


with_zeros = torch.tensor([[1.5, 0.0, -2.0, 0.5], [0.0, 3.0, 0.0, 2.0], [1.0, 2.0, 3.0, 4.0]],
                          dtype=torch.float64)
ties = torch.tensor([[1.0, 3.0, 3.0], [2.0, 0.5, -1.0]], dtype=torch.float64)
# Points where a one-sided choice decides the gradient: the bounds of clamp and hardtanh,
# zero for relu, abs, leaky_relu and elu.
edges = torch.tensor([[-0.5, 0.5, 0.0, 1.0], [-1.0, 0.25, -0.5, 0.5]], dtype=torch.float64)
constant_row = torch.tensor([[2.0, 2.0, 2.0], [1.0, -1.0, 0.5]], dtype=torch.float64)

SAMPLES = {
    **{name: unary() for name in ("neg", "sign", "exp", "expm1", "sin", "cos", "tanh",
                                  "sigmoid", "silu", "erf", "log_sigmoid")},
    **{name: unary() + [{"self": edges}] for name in ("abs", "relu")},
    **{name: unary(pos) for name in ("log", "log1p", "sqrt", "rsqrt")},
    "add.Tensor": binary(alpha=2.5),
    "sub.Tensor": binary(alpha=-1.5),
    "mul.Tensor": binary(),
    "div.Tensor": binary(b=pos),
    "remainder.Tensor": binary(b=pos),
    "pow.Tensor_Tensor": binary(a=pos) + [  # 0 ** b: b = 0, b > 0
        {"self": torch.tensor([0.0, 0.0, 0.0, 2.0], dtype=torch.float64),
         "other": torch.tensor([0.0, 1.5, 2.0, 0.0], dtype=torch.float64)}],
    "maximum": binary() + [{"self": ties, "other": ties.flip(1)}],
    "minimum": binary() + [{"self": ties, "other": ties.flip(1)}],
    "leaky_relu": [{"self": r(3, 4), "negative_slope": 0.2}, {"self": r()}, {"self": edges}],
    "elu": [{"self": r(3, 4), "alpha": 1.3, "scale": 0.7, "input_scale": 1.5}, {"self": r()},
            {"self": edges, "alpha": 1.3}],
    "softplus": [{"self": r(3, 4), "beta": 2.0, "threshold": 1.0}, {"self": r(5)},
                 {"self": edges, "beta": 2.0, "threshold": 1.0}],
    "gelu": [{"self": r(3, 4)}, {"self": r(3, 4), "approximate": "tanh"}, {"self": r()}],
    "gelu_backward": [{"grad_output": r(3, 4), "self": r(3, 4)},
                      {"grad_output": r(3, 4), "self": r(3, 4), "approximate": "tanh"},
                      {"grad_output": r(4), "self": r(3, 4), "approximate": "tanh"},
                      {"grad_output": r(3, 4), "self": r()}],
    "clamp": [{"self": r(3, 4), "min": -0.5, "max": 0.5}, {"self": r(3, 4), "max": 0.3},
              {"self": r(), "min": -0.3}, {"self": edges, "min": -0.5, "max": 0.5}],
    "hardtanh": [{"self": r(3, 4), "min_val": -0.5, "max_val": 0.5}, {"self": r(3, 4)},
                 {"self": edges, "min_val": -0.5, "max_val": 0.5}],
    "where.self": [{"condition": r(3, 4) > 0, "self": r(3, 4), "other": r(4)},
                   {"condition": r(3) > 0, "self": r(), "other": r(2, 1)}],
    "copy_": [{"self": r(3, 4), "src": r(4)}, {"self": r(3), "src": r()}],
    "to.dtype": [{"self": r(3, 4), "dtype": torch.float32}, {"self": r(), "dtype": torch.float64}],
    "clone": unary(),
    "sum": [{"self": r(3, 4)}, {"self": r()}, {"self": r(2, 3), "dtype": torch.float32}],
    "mean": [{"self": r(3, 4)}, {"self": r()}],
    "prod": [{"self": r(2, 3)}, {"self": with_zeros}, {"self": with_zeros[:, :2]},
             {"self": r()}],
    "sum.dim_IntList": [{"self": r(3, 4), "dim": [1]}, {"self": r(2, 3, 4), "dim": [0, 2],
                                                        "keepdim": True},
                        {"self": r(3, 4)}, {"self": r()}],
    "mean.dim": [{"self": r(3, 4), "dim": [1]}, {"self": r(2, 3, 4), "dim": [-1, 0],
                                                 "keepdim": True},
                 {"self": r(3, 4)}, {"self": r()}],
    "prod.dim_IntList": [{"self": r(3, 4), "dim": [1]}, {"self": with_zeros, "dim": [1]},
                         {"self": with_zeros, "dim": [0], "keepdim": True},
                         {"self": r(2, 3)}, {"self": with_zeros[:, :2]}, {"self": r()}],
    "amax": [{"self": r(3, 4), "dim": [1]}, {"self": ties, "dim": [1], "keepdim": True},
             {"self": ties}, {"self": r()}],
    "amin": [{"self": r(3, 4), "dim": [0]}, {"self": -ties, "dim": [1]}, {"self": -ties}],
    "max": [{"self": r(3, 4)}, {"self": ties.clamp(max=3.0) * 0 + 1}, {"self": r()}],
    "min": [{"self": r(3, 4)}, {"self": -ties}, {"self": r()}],
    "max.dim": [{"self": r(3, 4), "dim": 1}, {"self": r(3, 4), "dim": 0, "keepdim": True},
                {"self": r(), "dim": 0}],
    "min.dim": [{"self": r(3, 4), "dim": -1}, {"self": r(2, 3, 4), "dim": 1, "keepdim": True}],
    "var.correction": [{"self": r(3, 4), "dim": [1]}, {"self": r(3, 4), "dim": [0],
                                                       "correction": 0, "keepdim": True},
                       {"self": r(2, 3, 4), "dim": [0, 2], "correction": 2}, {"self": r(5)}],
    "std.correction": [{"self": r(3, 4), "dim": [1]}, {"self": r(3, 4), "correction": 0},
                       {"self": r(2, 3, 4), "dim": [-1], "keepdim": True, "correction": 1.5},
                       {"self": constant_row, "dim": [1]}],
    "matmul": [{"self": r(3, 4), "other": r(4, 5)}, {"self": r(4), "other": r(4, 5)},
               {"self": r(3, 4), "other": r(4)}, {"self": r(4), "other": r(4)},
               {"self": r(2, 3, 4), "other": r(4, 5)}, {"self": r(4), "other": r(2, 4, 5)},
               {"self": r(2, 1, 3, 4), "other": r(5, 4, 2)}, {"self": r(2, 3, 4), "other": r(4)}],
    "mm": [{"self": r(3, 4), "mat2": r(4, 5)}],
    "bmm": [{"self": r(2, 3, 4), "mat2": r(2, 4, 5)}],
    "addmm": [{"self": r(5), "mat1": r(3, 4), "mat2": r(4, 5), "beta": 0.5, "alpha": 2.0},
              {"self": r(3, 5), "mat1": r(3, 4), "mat2": r(4, 5)}],
    "linear": [{"input": r(2, 3, 4), "weight": r(5, 4), "bias": r(5)},
               {"input": r(4), "weight": r(5, 4)}, {"input": r(3, 4), "weight": r(5, 4),
                                                     "bias": r()},
               {"input": r(3, 4), "weight": r(4)}, {"input": r(4), "weight": r(4)}],
    "view": [{"self": r(3, 4), "size": [2, 6]}, {"self": r(), "size": [1]}],
    "_unsafe_view": [{"self": r(3, 4), "size": [2, 6]}, {"self": r(), "size": [1]}],
    "permute": [{"self": r(2, 3, 4), "dims": [2, 0, 1]}, {"self": r(2, 3, 4), "dims": [-1, 0, 1]}],
    "transpose.int": [{"self": r(2, 3, 4), "dim0": 0, "dim1": -1}],
    "t": [{"self": r(3, 4)}, {"self": r(3)}],
    "expand": [{"self": r(3, 1), "size": [2, 3, 4]}, {"self": r(), "size": [3]}],
    "as_strided": [{"self": r(3, 4), "size": [2, 2], "stride": [1, 2], "storage_offset": 1},
                   {"self": r(3, 4), "size": [3, 3], "stride": [1, 1]},
                   {"self": r(4, 3).t(), "size": [2, 3], "stride": [3, 1]}],
    "squeeze": [{"self": r(3, 1, 4)}, {"self": r()}],
    "squeeze.dim": [{"self": r(3, 1, 4), "dim": 1}, {"self": r(3, 4), "dim": 0}],
    "unsqueeze": [{"self": r(3, 4), "dim": -1}, {"self": r(), "dim": 0}],
    "slice.Tensor": [{"self": r(3, 5), "dim": 1, "start": 1, "step": 2},
                     {"self": r(4, 3), "start": -3, "end": -1}],
    "select.int": [{"self": r(3, 4), "dim": 1, "index": -1}, {"self": r(3), "dim": 0, "index": 1}],
    "split.Tensor": [{"self": r(5, 3), "split_size": 2}, {"self": r(3, 4), "split_size": 3,
                                                         "dim": -1}],
    "split_with_sizes": [{"self": r(5, 3), "split_sizes": [2, 3]}],
    "unbind.int": [{"self": r(3, 4), "dim": 1}],
    "alias": unary(),
    "cat": [{"tensors": [r(2, 3), r(4, 3)]}, {"tensors": [r(2, 3), r(2, 1), r(2, 2)], "dim": -1}],
    "index_select": [{"self": r(4, 3), "dim": 0, "index": torch.tensor([0, 2, 2])},
                     {"self": r(4, 3), "dim": -1, "index": torch.tensor([1])}],
    "gather": [{"self": r(3, 4), "dim": 1, "index": ints(4, 3, 2)},
               {"self": r(3, 4), "dim": 0, "index": ints(3, 5, 4)},
               {"self": r(), "dim": 0, "index": torch.tensor(0)}],
    "masked_fill.Scalar": [{"self": r(3, 4), "mask": r(3, 4) > 0, "value": 1.5},
                           {"self": r(3, 4), "mask": r(4) > 0, "value": -1.0}],
    "tril": [{"self": r(3, 4)}, {"self": r(2, 4, 4), "diagonal": 1}],
    "triu": [{"self": r(3, 4)}, {"self": r(2, 4, 4), "diagonal": -1}],
    "embedding": [{"weight": r(5, 3), "indices": torch.tensor([[0, 2, 2, 4], [1, 1, 1, 3]])},
                  {"weight": r(5, 3), "indices": torch.tensor([[0, 2, 2, 4], [1, 1, 1, 3]]),
                   "padding_idx": 1, "scale_grad_by_freq": True},
                  {"weight": r(5, 3), "indices": torch.tensor([3, 0, 3]),
                   "scale_grad_by_freq": True}],
    "index.Tensor": [{"self": r(4, 3), "indices": [torch.tensor([0, 2, 2])]},
                     {"self": r(4, 3), "indices": [None, torch.tensor([1, 0])]},
                     {"self": r(4, 3), "indices": [r(4, 3) > 0]}],
    "index_put_": [{"self": r(4, 3), "indices": [torch.tensor([0, 2])], "values": r(3)},
                   {"self": r(4, 3), "indices": [torch.tensor([0, 2, 0])], "values": r(3, 3),
                    "accumulate": True},
                   {"self": r(4, 3), "indices": [r(4, 3) > 0], "values": r()}],
    "masked_select": [{"self": r(3, 4), "mask": r(3, 4) > 0}, {"self": r(4), "mask": r(3, 4) > 0}],
    "softmax.int": [{"self": r(3, 4), "dim": 1}, {"self": r(3, 4), "dim": 0},
                    {"self": r(), "dim": 0}],
    "log_softmax.int": [{"self": r(3, 4), "dim": -1}, {"self": r(), "dim": 0}],
    "layer_norm": [{"input": r(2, 3, 4), "normalized_shape": [4], "weight": r(4), "bias": r(4)},
                   {"input": r(2, 3, 4), "normalized_shape": [3, 4]},
                   {"input": r(3, 4), "normalized_shape": [4], "weight": r(4), "eps": 0.1}],
    "_layer_norm_backward_input": [
        {"grad_out": r(2, 3, 4), "input": r(2, 3, 4), "normalized_shape": [4], "weight": r(4)},
        {"grad_out": r(2, 3, 4), "input": r(2, 3, 4), "normalized_shape": [3, 4]},
        {"grad_out": r(3, 4), "input": r(3, 4), "normalized_shape": [4], "weight": r(4),
         "eps": 0.1}],
    "_scaled_dot_product_fused_attention": [
        {"query": r(2, 3, 4), "key": r(2, 5, 4), "value": r(2, 5, 3), "scale": 0.7},
        {"query": r(2, 2, 4, 3), "key": r(2, 2, 4, 3), "value": r(2, 2, 4, 2),
         "is_causal": True, "scale": 0.5},
        {"query": r(2, 3, 4), "key": r(2, 5, 4), "value": r(2, 5, 3), "attn_mask": r(3, 5)}],
    "_scaled_dot_product_attention_weights": [
        {"query": r(2, 3, 4), "key": r(2, 5, 4), "logsumexp": r(2, 3), "scale": 0.7},
        {"query": r(2, 4, 3), "key": r(2, 4, 3), "logsumexp": r(2, 4), "is_causal": True},
        {"query": r(2, 3, 4), "key": r(2, 5, 4), "logsumexp": r(2, 3), "attn_mask": r(3, 5)}],
    "_ctc_loss": [
        {"log_probs": r(5, 2, 4).log_softmax(2), "targets": torch.tensor([[1, 2], [3, 3]]),
         "input_lengths": [5, 4], "target_lengths": [2, 1]},
        {"log_probs": r(6, 3, 4).log_softmax(2), "targets": torch.tensor([0, 1, 1, 2, 0]),
         "input_lengths": [6, 2, 5], "target_lengths": [3, 0, 2], "blank": 3},
        {"log_probs": r(3, 2, 3), "targets": torch.tensor([[1, 1, 1], [2, 0, 0]]),
         "input_lengths": [3, 3], "target_lengths": [3, 1], "blank": 0, "zero_infinity": True}],
    "uniform_": [{"self": r(3, 4)}],
    "normal_": [{"self": r(3)}],
    "sort": [{"self": r(3, 4)}, {"self": r(3, 4), "dim": 0, "descending": True},
             {"self": r(), "dim": 0}],
    "sort.stable": [{"self": ties, "stable": True}, {"self": r(5), "stable": True,
                                                      "descending": True}],
    "topk": [{"self": r(3, 5), "k": 2}, {"self": r(4, 3), "k": 3, "dim": 0, "largest": False},
             {"self": r(), "k": 1}],
    "cumsum": [{"self": r(3, 4), "dim": 1}, {"self": r(), "dim": 0}],
    "cumprod": [{"self": r(3, 4), "dim": 1}, {"self": with_zeros, "dim": 1},
                {"self": with_zeros, "dim": 0}, {"self": r(), "dim": 0}],
    "roll": [{"self": r(3, 4), "shifts": [1], "dims": [0]},
             {"self": r(3, 4), "shifts": [1, -2], "dims": [0, 1]},
             {"self": r(3, 4), "shifts": [5]}],
    "flip": [{"self": r(3, 4), "dims": [0, 1]}, {"self": r(3, 4), "dims": [-1]}],
    "repeat": [{"self": r(2, 3), "repeats": [2, 1, 3]}, {"self": r(3), "repeats": [2]},
               {"self": r(), "repeats": [2, 2]}],
    "repeat_interleave.self_int": [{"self": r(2, 3), "repeats": 2, "dim": 1},
                                   {"self": r(2, 3), "repeats": 3},
                                   {"self": r(2, 3), "repeats": 2, "dim": -2}],
}

# An in-place or out= overload written on its own is checked with its functional
# overload's formulas (form_of): the in-place op runs on a copy of the leaf.
IN_PLACE_SAMPLES = {
    "gelu_": [{"self": r(3, 4)}, {"self": r(3, 4), "approximate": "tanh"}],
    "tril_": [{"self": r(3, 4), "diagonal": 1}],
    "triu_": [{"self": r(3, 4)}],
}

FORMULAS = [name for name, row in BY_NAME.items() if row.derivative.kind == "formula"]


def test_every_formula_has_samples():
    assert sorted(set(FORMULAS) - set(SAMPLES)) == []
    assert sorted(set(SAMPLES) - set(FORMULAS)) == []


@pytest.mark.parametrize("overload", FORMULAS)
def test_the_formula_matches_pytorchs_gradient(overload):
    for args in SAMPLES[overload]:
        check_formulas(overload, args)


@pytest.mark.parametrize("overload", sorted(IN_PLACE_SAMPLES))
def test_an_in_place_overload_of_its_own_takes_its_functional_formulas(overload):
    target = BY_NAME[overload].derivative.target
    for args in IN_PLACE_SAMPLES[overload]:
        check_formulas(overload, args, formulas_of=target)


def test_the_forms_of_another_overload_name_one_with_formulas():
    forms = {n: r.derivative.target for n, r in BY_NAME.items() if r.derivative.kind == "form_of"}
    assert forms == {"gelu_": "gelu", "tril_": "tril", "triu_": "triu", "sort.values": "sort",
                     "sort.values_stable": "sort.stable", "topk.values": "topk"}
    assert set(IN_PLACE_SAMPLES) <= set(forms)
