"""pith.nn.functional: the functional forms of the nn layers, as torch.nn.functional (names,
keyword names, defaults, exception types), written over pith's operators.

linear, gelu, leaky_relu, elu, hardtanh (and relu6), softplus, logsigmoid, layer_norm,
embedding, softmax and log_softmax are single pith ops; dropout and the losses are
compositions of them; scaled_dot_product_attention is one fused op where it applies (See
Note [Fused attention], kernels/attention.c), else a composition.
"""
import math
import numbers
import warnings

import pith as _pith  # partly initialised when pith imports nn; looked up at call time

from .. import _C

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "hardtanh",
           "hardtanh_", "softplus", "logsigmoid", "gelu", "silu", "tanh", "sigmoid", "softmax",
           "log_softmax", "layer_norm", "linear", "embedding", "dropout", "pad",
           "scaled_dot_product_attention", "nll_loss", "cross_entropy", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "mse_loss", "l1_loss"]

# PyTorch's names of dtypes, for messages that quote them ("but got Int").
_TORCH_DTYPE_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool",
}


def _dtype_name(dtype):
    name = str(dtype).rpartition(".")[2]
    return _TORCH_DTYPE_NAMES.get(name, name)


# ---- activations -------------------------------------------------------------------------
#
# The activations that are not single pith ops are compositions of them, computed at float32
# precision for float16/bfloat16 inputs (as PyTorch's CPU kernels do) and rounded once.
# inplace=True writes the result into the input and returns it.

def _check_float_kernel(input, kernel):
    # PyTorch's message for a floating-point kernel given an integer or bool tensor.
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtype_name(input.dtype)}'")


def _upcast(input):
    """input at float32 precision when it is float16/bfloat16 (else itself)."""
    return input.to(_C.float32) if input.dtype in (_C.float16, _C.bfloat16) else input


def _result(input, value, inplace):
    """value in input's dtype: written into input when inplace."""
    if inplace:
        return input.copy_(value)
    return value if value.dtype == input.dtype else value.to(input.dtype)


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x: the op leaky_relu (or leaky_relu_)."""
    _check_float_kernel(input, "leaky_relu_cpu")
    ops = _pith.ops.pith
    return (ops.leaky_relu_ if inplace else ops.leaky_relu)(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * expm1(x): the op elu (or elu_)."""
    _check_float_kernel(input, "elu_cpu")
    ops = _pith.ops.pith
    return (ops.elu_ if inplace else ops.elu)(input, alpha)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """input clamped to [min_val, max_val] in its own dtype: the op hardtanh (or hardtanh_)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype == _C.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    ops = _pith.ops.pith
    return (ops.hardtanh_ if inplace else ops.hardtanh)(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """min(max(0, x), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold: the op
    softplus."""
    _check_float_kernel(input, "softplus_cpu")
    return _pith.ops.pith.softplus(input, beta, threshold)


def logsigmoid(input):
    """log(1 / (1 + exp(-x))), computed without overflow: the op log_sigmoid."""
    _check_float_kernel(input, "log_sigmoid_cpu")
    return _pith.ops.pith.log_sigmoid(input)


def gelu(input, approximate="none"):
    return _pith.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return input.silu_() if inplace else _pith.silu(input)


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


# ---- layers --------------------------------------------------------------------------------

def linear(input, weight, bias=None):
    """input @ weight.T + bias."""
    return _pith.linear(input, weight, bias)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _pith.layer_norm(input, normalized_shape, weight, bias, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by the indices in `input`. With max_norm, the picked rows of
    weight whose norm exceeds it are first rescaled in place, as PyTorch does."""
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return _pith.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _embedding_renorm_(weight, input, max_norm, norm_type):
    # Rows are rescaled one by one, like PyTorch's loop over the sorted unique indices.
    index = sorted(set(input.flatten().tolist()))
    rows = weight.index_select(0, _C.tensor(index, dtype=_C.int64))
    if norm_type == math.inf:
        norms = rows.abs().amax(1)
    else:
        norms = (rows.abs() ** norm_type).sum(1) ** (1.0 / norm_type)
    for j, norm in enumerate(norms.tolist()):
        if norm > max_norm:
            weight[index[j]] = rows[j] * (max_norm / (norm + 1e-7))


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the others by 1/(1-p); returns
    `input` itself when not training or p == 0. Masks come from pith's generator."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    keep = _C.rand(tuple(input.shape)) < 1 - p
    if inplace:
        return input.mul_(keep).div_(1 - p)
    return input * keep / (1 - p)


def pad(input, pad, mode="constant", value=None):
    """Pads (or, with negative amounts, crops) the last len(pad) // 2 dims of `input`:
    pad = (left of the last dim, right of the last dim, left of the one before, ...), as
    torch.nn.functional.pad. Only mode='constant' is implemented (the others raise
    NotImplementedError); the result is a new tensor of input's dtype, `value` (default 0)
    converted to it."""
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant":
        if value is not None:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        raise NotImplementedError(f"pad(): mode '{mode}' is not implemented in pith "
                                  "(only 'constant')")
    pad = list(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    ndim = input.dim()
    if len(pad) // 2 > ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {ndim}")
    # Crop first (narrow checks what is cropped, with its message), then place what is left
    # into a tensor filled with value.
    kept = input
    for i in range(len(pad) // 2):
        d, left, right = ndim - 1 - i, pad[2 * i], pad[2 * i + 1]
        if left < 0:
            kept = kept.narrow(d, -left, kept.shape[d] + left)
        if right < 0:
            kept = kept.narrow(d, 0, kept.shape[d] + right)
    shape = list(kept.shape)
    for i in range(len(pad) // 2):
        d = ndim - 1 - i
        shape[d] += max(pad[2 * i], 0) + max(pad[2 * i + 1], 0)
    out = _C.full(tuple(shape), 0 if value is None else value, dtype=input.dtype,
                  device=input.device)
    # Written by indexing, which records CopySlices on `out` when `kept` requires grad
    # (an in-place copy into a narrow() view of `out` would not: docs/autograd.md,
    # "Differences from PyTorch").
    region = [slice(None)] * ndim
    for i in range(len(pad) // 2):
        d = ndim - 1 - i
        region[d] = slice(max(pad[2 * i], 0), max(pad[2 * i], 0) + kept.shape[d])
    out[tuple(region)] = kept
    return out


# ---- attention -----------------------------------------------------------------------------

# The names PyTorch's C++ messages give dtypes ("query.dtype: float").
_CPP_DTYPE_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half",
    "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
    "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
}


def _cpp_dtype_name(dtype):
    name = str(dtype).rpartition(".")[2]
    return _CPP_DTYPE_NAMES.get(name, name)


def _argument_type_error(function, name, position, expected, value):
    where = f" (position {position})" if position else ""
    return TypeError(f"{function}(): argument '{name}'{where} must be {expected}, not "
                     f"{type(value).__name__}")


def _is_float_argument(value):
    # What PyTorch's binder takes for a float: a real number or a 0-dim tensor.
    if isinstance(value, _C.Tensor):
        return value.dim() == 0
    return isinstance(value, numbers.Real)


def _check_attention_arguments(query, key, value, attn_mask, dropout_p, is_causal, scale,
                               enable_gqa):
    # The binder's TypeErrors of torch's scaled_dot_product_attention, then its
    # validate_sdpa_input checks, in PyTorch's order.
    name = "scaled_dot_product_attention"
    for position, (arg, tensor) in enumerate((("query", query), ("key", key),
                                              ("value", value)), 1):
        if not isinstance(tensor, _C.Tensor):
            raise _argument_type_error(name, arg, position, "Tensor", tensor)
    if attn_mask is not None and not isinstance(attn_mask, _C.Tensor):
        raise _argument_type_error(name, "attn_mask", 0, "Tensor", attn_mask)
    for arg, number in (("dropout_p", dropout_p), ("scale", scale)):
        if number is not None and not _is_float_argument(number):
            raise _argument_type_error(name, arg, 0, "float", number)
    for arg, flag in (("is_causal", is_causal), ("enable_gqa", enable_gqa)):
        if not isinstance(flag, bool):
            raise _argument_type_error(name, arg, 0, "bool", flag)
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_cpp_dtype_name(query.dtype)} key.dtype: "
                           f"{_cpp_dtype_name(key.dtype)} and value.dtype: "
                           f"{_cpp_dtype_name(value.dtype)} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 "
                           f"dimensional, but got query.dim: {query.dim()} key.dim: "
                           f"{key.dim()} and value.dim: {value.dim()} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_C.bool, _C.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_cpp_dtype_name(attn_mask.dtype)}"
                           f" and  query.dtype: {_cpp_dtype_name(query.dtype)} instead.")
    if attn_mask is not None and is_causal:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found "
                           f"{_dtype_name(query.dtype)}")


def _repeat_heads(tensor, repeats):
    """tensor.repeat_interleave(repeats, dim=-3), as a view and one copy."""
    if repeats == 1:
        return tensor
    shape = tuple(tensor.shape)
    expanded = tensor.unsqueeze(-3).expand(shape[:-2] + (repeats,) + shape[-2:])
    return expanded.reshape(shape[:-3] + (shape[-3] * repeats,) + shape[-2:])


def _group_query_heads(query, key, value):
    # PyTorch's enable_gqa: key and value heads (dim -3) repeat to query's head count.
    q_heads, k_heads, v_heads = query.size(-3), key.size(-3), value.size(-3)
    if q_heads == k_heads == v_heads:
        return key, value
    if k_heads == 0 or v_heads == 0 or q_heads % k_heads or q_heads % v_heads:
        raise RuntimeError("Number of heads in key and value must divide the number of "
                           "heads in query")
    return _repeat_heads(key, q_heads // k_heads), _repeat_heads(value, q_heads // v_heads)


def _fused_attention_applies(query, key, value, attn_mask):
    """Whether the fused op takes the call (See Note [Fused attention], kernels/attention.c):
    float32 or float64 CPU tensors of one batch shape, no empty dim, and a mask that
    broadcasts to the scores without growing them. Else the composition below, which
    broadcasts the batch dims and raises the composed ops' errors."""
    if query.dtype not in (_C.float32, _C.float64) or query.device.type != "cpu":
        return False
    if not (query.dim() == key.dim() == value.dim()) or \
            query.shape[:-2] != key.shape[:-2] or key.shape[:-1] != value.shape[:-1]:
        return False
    if query.numel() == 0 or key.numel() == 0 or value.numel() == 0:
        return False
    if attn_mask is not None:
        scores = tuple(query.shape[:-1]) + (key.size(-2),)
        mask = tuple(attn_mask.shape)
        if len(mask) > len(scores) or any(m not in (1, s) for m, s in
                                          zip(reversed(mask), reversed(scores))):
            return False
    return True


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, *, scale=None, enable_gqa=False):
    """softmax(query @ key.T * scale + bias) @ value over the last two dims, with batch
    dims broadcast as matmul does: query (..., L, E), key (..., S, E), value (..., S, Ev).

    attn_mask is a bool mask (True attends) or an additive float mask, broadcast to
    (..., L, S); is_causal masks as torch does, with the top-left aligned lower triangle of
    an (L, S) matrix. scale defaults to 1/sqrt(E). Rows that attend nothing give 0 (PyTorch's
    safe softmax). dropout_p > 0 drops attention weights with pith's generator. float16 and
    bfloat16 are computed at float32 precision and rounded once."""
    _check_attention_arguments(query, key, value, attn_mask, dropout_p, is_causal, scale,
                               enable_gqa)
    dropout_p = float(dropout_p)
    if enable_gqa:
        key, value = _group_query_heads(query, key, value)
    dtype = query.dtype
    query, key, value = _upcast(query), _upcast(key), _upcast(value)
    length, source_length, embed = query.size(-2), key.size(-2), query.size(-1)
    if scale is None:
        scale = 1 / math.sqrt(embed) if embed else math.inf
    scale = float(scale)
    if dropout_p <= 0.0 and _fused_attention_applies(query, key, value, attn_mask):
        if attn_mask is not None and attn_mask.dtype not in (_C.bool, query.dtype):
            attn_mask = attn_mask.to(query.dtype)
        out = _pith.ops.pith._scaled_dot_product_fused_attention(
            query, key, value, attn_mask, is_causal, scale)[0]
        return out if out.dtype == dtype else out.to(dtype)
    scores = query.matmul(key.transpose(-2, -1))
    if embed:  # with E == 0 the scores are 0 whatever the scale, as in PyTorch
        scores.mul_(scale)
    if is_causal:
        # Above the diagonal is -inf, written in place (as PyTorch's fused CPU kernel masks),
        # not added as a float mask: no (L, S) float tensor, no broadcast add.
        scores.masked_fill_(_C.ones((length, source_length), dtype=_C.bool).triu(1),
                            -math.inf)
    elif attn_mask is not None:
        if attn_mask.dtype == _C.bool:  # PyTorch's convert_boolean_attn_mask
            attn_mask = _C.zeros(tuple(attn_mask.shape), dtype=scores.dtype).masked_fill(
                attn_mask.logical_not(), -math.inf)
        scores.add_(attn_mask)  # in place: the mask broadcasts into the scores' shape
    # PyTorch's safe softmax: a row of scores that is all -inf attends nothing and gives 0,
    # and its gradient is 0. Such a row's softmax is NaN throughout, so only when the first
    # column of the weights has a NaN is the exact test needed (a row whose max is -inf;
    # NaN's is not), on detached aliases, so that nothing is recorded: one look at L
    # numbers in the common case instead of a reduction over the scores. Then those rows'
    # scores become 0 before the softmax (so its backward sees finite weights, not NaN) and
    # their weights 0 after; both out of place, because softmax saves its result for
    # backward. (With no source positions the weights are empty: nothing to fill.)
    weights = scores.softmax(-1)
    if source_length and weights.detach()[..., 0].isnan().any():
        empty_rows = scores.detach().amax(-1, keepdim=True) == -math.inf
        if empty_rows.any():
            weights = scores.masked_fill(empty_rows, 0).softmax(-1).masked_fill(empty_rows, 0)
    if dropout_p > 0.0:
        if dropout_p > 1.0:  # PyTorch's C++ dropout raises RuntimeError, not ValueError
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                               f"{dropout_p}")
        # in place only when no backward needs the weights (softmax saves its result)
        weights = dropout(weights, dropout_p, inplace=not weights.requires_grad)
    out = weights.matmul(value)
    return out if out.dtype == dtype else out.to(dtype)


# ---- losses --------------------------------------------------------------------------------

def _reduction_enum(reduction):
    """PyTorch's _Reduction.get_enum: the reduction's canonical name, or ValueError."""
    if reduction in ("none", "mean", "sum"):
        return reduction
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=3)
        return "mean"
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce):
    """PyTorch's _Reduction.legacy_get_string: the reduction the deprecated size_average and
    reduce arguments ask for (None reads True), with PyTorch's warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        reduction = "mean"
    else:
        reduction = "sum" if reduce else "none"
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", stacklevel=3)
    return reduction


def _check_reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _reduction_enum(reduction)


def _apply_reduction(loss, reduction):
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _check_loss_dtypes(input, weight, kernel):
    # PyTorch's kernels: a floating input, and a weight of input's dtype.
    _check_float_kernel(input, kernel)
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_name(input.dtype)} but found "
                           f"{_dtype_name(weight.dtype)}")


def _class_dim_and_weight(input, weight):
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    return class_dim, n_classes


def _check_class_target(input, target):
    """Checks a class-index target against input (N, C, d1, ...) or (C,) as PyTorch does;
    returns input and target, with a 1-element 1-D target of a 1-D input as a batch of 1."""
    if target.dtype not in (_C.int64, _C.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dtype_name(target.dtype)}")
    if input.dim() == 1:
        if target.dim() == 0:
            return input, target
        if target.dim() == 1 and target.shape[0] == 1:
            return input.unsqueeze(0), target
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: "
                           f"{list(target.shape)})")
    target_batch = target.shape[0] if target.dim() >= 1 else 0
    if input.shape[0] != target_batch:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target_batch}).")
    if input.dim() == 2:
        if target.dim() != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        return input, target
    expected = [input.shape[0]] + list(input.shape)[2:]
    if list(target.shape) != expected:
        raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    return input, target


def _nll(log_probs, target, weight, ignore_index, class_dim, n_classes):
    """Per-element -weight[t] * log_probs[t] (0 where t == ignore_index), the per-element
    weights (None without weight) and the ignore mask."""
    if target.dtype != _C.int64:
        target = target.to(_C.int64)
    ignored = target == ignore_index
    safe = target.masked_fill(ignored, 0)
    out_of_range = (safe < 0) | (safe >= n_classes)
    if out_of_range.any():
        first = out_of_range.flatten().to(_C.int32).argmax().item()
        raise IndexError(f"Target {safe.flatten()[first].item()} is out of bounds.")
    picked = log_probs.gather(class_dim, safe.unsqueeze(class_dim)).squeeze(class_dim)
    if weight is None:
        return (-picked).masked_fill(ignored, 0), None, ignored
    w = weight.index_select(0, safe.reshape(-1)).reshape(tuple(safe.shape))
    w = w.masked_fill(ignored, 0)
    return (-(picked * w)).masked_fill(ignored, 0), w, ignored


def _reduce_weighted(losses, w, ignored, reduction):
    # PyTorch's mean divides by the total weight of the targets that are not ignored.
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / (w.sum() if w is not None else (~ignored).sum())


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """The negative log likelihood loss of log-probabilities `input` and class indices."""
    reduction = _check_reduction(size_average, reduce, reduction)
    class_dim, n_classes = _class_dim_and_weight(input, weight)
    kernel = "nll_loss_out_frame" if input.dim() <= 2 else "nll_loss2d_forward_out_frame"
    input, target = _check_class_target(input, target)
    _check_loss_dtypes(input, weight, kernel)
    class_dim = 0 if input.dim() == 1 else 1
    losses, w, ignored = _nll(input, target, weight, ignore_index, class_dim, n_classes)
    return _reduce_weighted(losses, w, ignored, reduction)


def _log_softmax_kernel(input):
    # The name PyTorch's messages give its log_softmax over the class dim.
    return "log_softmax_lastdim_kernel_impl" if input.dim() <= 2 else "log_softmax_kernel_impl"


def _weight_along(weight, input, class_dim):
    shape = [1] * input.dim()
    shape[class_dim] = weight.numel()
    return weight.reshape(shape)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """The cross entropy of logits `input` (C), (N, C) or (N, C, d1, ...) against class
    indices (int64 or uint8) or, when target has input's shape, class probabilities."""
    reduction = _check_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    class_dim, n_classes = _class_dim_and_weight(input, weight)
    if tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probabilities(input, target, weight, reduction,
                                            label_smoothing, class_dim, n_classes)
    input, target = _check_class_target(input, target)
    _check_loss_dtypes(input, weight, _log_softmax_kernel(input))
    class_dim = 0 if input.dim() == 1 else 1
    log_probs = input.log_softmax(class_dim)
    losses, w, ignored = _nll(log_probs, target, weight, ignore_index, class_dim, n_classes)
    loss = _reduce_weighted(losses, w, ignored, reduction)
    if label_smoothing == 0.0:
        return loss
    # PyTorch's formula: (1 - eps) * nll + eps / C * (the sum over classes of -w_c log p_c).
    if weight is None:
        smooth = -log_probs.sum(class_dim)
    else:
        smooth = -(log_probs * _weight_along(weight, log_probs, class_dim)).sum(class_dim)
    smooth = _reduce_weighted(smooth.masked_fill(ignored, 0), w, ignored, reduction)
    return (1 - label_smoothing) * loss + smooth * (label_smoothing / n_classes)


def _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing,
                                 class_dim, n_classes):
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class "
                           f"probabilities, got {_dtype_name(target.dtype)}")
    _check_float_kernel(input, _log_softmax_kernel(input))
    log_probs = input.log_softmax(class_dim)
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    products = log_probs * target
    if weight is not None:
        products = products * _weight_along(weight, input, class_dim)
    if reduction == "none":
        return -products.sum(class_dim)
    if reduction == "sum":
        return -products.sum()
    if input.numel() == 0:
        return products.sum() * math.nan
    return -products.sum() / (input.numel() / n_classes)


def _broadcast_shapes(*shapes):
    """torch.broadcast_shapes, with its message."""
    result = [1] * max(len(shape) for shape in shapes)
    for index, shape in enumerate(shapes):
        for dim in range(-1, -1 - len(shape), -1):
            size = shape[dim]
            if size == 1 or size == result[dim]:
                continue
            if result[dim] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {size} at "
                                   f"{dim}! Mismatching argument at index {index} had "
                                   f"{shape!r}; but expected shape should be broadcastable "
                                   f"to {result}")
            result[dim] = size
    return tuple(result)


def _first_index(mask):
    """The flat index of the first True of a non-empty bool tensor."""
    return mask.flatten().to(_C.int32).argmax().item()


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-(target * log(input) + (1 - target) * log(1 - input)) of probabilities `input`,
    each log clamped at -100 as PyTorch does; `weight` broadcasts to target's shape."""
    reduction = _check_reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the "
                         f"input size ({input.size()}) is deprecated. Please ensure they have "
                         "the same size.")
    if weight is not None:
        weight = weight.expand(_broadcast_shapes(target.size(), weight.size()))
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_dtype_name(target.dtype)} but expected "
                           f"{_dtype_name(input.dtype)}")
    _check_float_kernel(input, "binary_cross_entropy")
    x, t = _upcast(input), _upcast(target)
    # PyTorch checks element by element: the first bad value names input or target.
    bad_input = ~((x >= 0) & (x <= 1))
    bad_target = ~((t >= 0) & (t <= 1))
    bad = bad_input | bad_target
    if bad.any():
        which = "input" if bad_input.flatten()[_first_index(bad)].item() else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")
    loss = (t - 1) * (-x).log1p().clamp(min=-100) - t * x.log().clamp(min=-100)
    loss = _result(input, loss, False)
    if weight is not None:
        loss.mul_(weight)
    return _apply_reduction(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(input), target) in the stable form PyTorch uses:
    (1 - target) * input - (1 + (pos_weight - 1) * target) * logsigmoid(input), times
    weight. The result has target's dtype; weight and pos_weight broadcast into it."""
    reduction = _check_reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    log_sigmoid = logsigmoid(input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1).mul(target).add_(1)
        log_sigmoid.mul_(log_weight)
    loss = (1 - target).mul_(input).sub_(log_sigmoid)
    if weight is not None:
        loss.mul_(weight)
    return _apply_reduction(loss, reduction)


def _target_size_warning(input, target):
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _check_broadcastable(a, b):
    """Shapes a and b broadcast together, or the message of torch.broadcast_tensors."""
    ndim = max(len(a), len(b))
    a, b = (1,) * (ndim - len(a)) + tuple(a), (1,) * (ndim - len(b)) + tuple(b)
    for dim, (size_a, size_b) in enumerate(zip(a, b)):
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(f"The size of tensor a ({size_a}) must match the size of "
                               f"tensor b ({size_b}) at non-singleton dimension {dim}")


def _pointwise_loss(input, target, size_average, reduce, reduction, weight, error, kernel):
    """mse_loss and l1_loss: error(input - target) after PyTorch's checks, in its order:
    the size warning, the broadcast, then either the weighted form (weight of input's size;
    'mean' divides by weight.sum()) or the reduction name and the kernel's dtype check
    (`kernel`, the name in its message, or None for no check)."""
    _target_size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    _check_broadcastable(input.shape, target.shape)
    if weight is not None:
        if weight.size() != input.size():
            raise ValueError("Weights and input must have the same size.")
        weighted = error(input - target) * weight
        if reduction == "none":
            return weighted
        if reduction == "sum":
            return weighted.sum()
        if reduction == "mean":
            return weighted.sum() / weight.sum()
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                         "'mean', 'sum'.")
    reduction = _reduction_enum(reduction)
    if kernel is not None:
        dtype = _promoted_dtype(input, target)
        if not dtype.is_floating_point:
            raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                      f"'{_dtype_name(dtype)}'")
    return _apply_reduction(error(input - target), reduction)


def _promoted_dtype(a, b):
    # The dtype PyTorch's promotion gives a op b: read from a one-element op of the same
    # kinds (a 0-dim tensor ranks below a dimensioned one).
    def probe(t):
        return _C.zeros(() if t.dim() == 0 else (1,), dtype=t.dtype)
    return (probe(a) + probe(b)).dtype


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target) ** 2, broadcast (with a warning when the sizes differ) and reduced."""
    return _pointwise_loss(input, target, size_average, reduce, reduction, weight,
                           lambda difference: difference * difference, "mse_cpu")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|, broadcast (with a warning when the sizes differ) and reduced."""
    return _pointwise_loss(input, target, size_average, reduce, reduction, weight,
                           lambda difference: difference.abs(), None)


# ---- losses: the rest of torch.nn's ----------------------------------------------------------
#
# Each is a composition of differentiable pith ops, so that its gradient comes from its parts
# (docs/training.md, "Losses"), with PyTorch's checks and messages in PyTorch's order. ctc_loss
# is a pith.autograd.Function whose backward is PyTorch's _ctc_loss_backward formula.

__all__ += ["kl_div", "poisson_nll_loss", "gaussian_nll_loss", "smooth_l1_loss", "huber_loss",
            "soft_margin_loss", "multilabel_soft_margin_loss", "hinge_embedding_loss",
            "multi_margin_loss", "multilabel_margin_loss", "cosine_embedding_loss",
            "margin_ranking_loss", "pairwise_distance", "triplet_margin_loss",
            "triplet_margin_with_distance_loss", "linear_cross_entropy",
            "ctc_loss"]


def _check_same_broadcast(input, target):
    """input op target broadcasts, with broadcast_tensors' message; the shape."""
    _check_broadcastable(input.shape, target.shape)
    return _broadcast_shapes(tuple(input.shape), tuple(target.shape))


def _check_into_input(input, other):
    # An out= kernel writing into input's shape: other broadcasts into it, or PyTorch's
    # message of a resize that the broadcast would need.
    shape = _check_same_broadcast(input, other)
    if shape != tuple(input.shape):
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")


def _xlogy(x, y):
    """torch.xlogy: x * log(y), 0 where x == 0 unless y is NaN, with torch's gradients:
    log(y) (0 where x == 0) of x, x / y of y (NaN at x == y == 0, as PyTorch's)."""
    return x * y.log().masked_fill((x == 0) & ~y.isnan(), 0)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """The pointwise KL divergence target * (log(target) - input) of log-probabilities
    `input` (target as probabilities, or log-probabilities with log_target), reduced;
    'batchmean' divides the sum by the batch size (input.size(0))."""
    if size_average is not None or reduce is not None:
        reduction_name = _legacy_reduction(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        reduction_name = "sum" if reduction == "batchmean" else _reduction_enum(reduction)
    if not input.dtype.is_floating_point and not target.dtype.is_floating_point:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    _check_same_broadcast(target, input)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogy(target, target) - target * input
    reduced = _apply_reduction(loss, reduction_name)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size(0)
    return reduced


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """exp(input) - target * input (log_input), else input - target * log(input + eps);
    with full, Stirling's term target * log(target) - target + log(2 pi target) / 2 where
    target > 1."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    _check_same_broadcast(target, input)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """(log(max(var, eps)) + (input - target)**2 / max(var, eps)) / 2 (+ log(2 pi) / 2 with
    full). var has input's shape, or one dim less, or one dim of size 1 (homoscedastic); the
    clamp at eps is invisible to the gradient, as in PyTorch."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _pith.ones_like(input)
    elif not isinstance(var, _C.Tensor):
        # PyTorch calls torch.any(var < 0) on it: its binder's TypeError (an int var too)
        raise TypeError(f"any() received an invalid combination of arguments - got "
                        f"({type(var < 0).__name__}), but expected one of:")
    elif (var < 0).any():
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(
                y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with _pith.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)


def _pointwise_kernel_check(input, target, kernel):
    dtype = _promoted_dtype(input, target)
    if not dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype_name(dtype)}\'')


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 * d**2 / beta where |d| < beta, else |d| - 0.5 * beta, of d = input - target;
    beta == 0 is l1_loss."""
    _target_size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    _check_broadcastable(input.shape, target.shape)
    reduction = _reduction_enum(reduction)
    if beta == 0.0:  # PyTorch's l1_loss kernel, without l1_loss's size warning again
        return _apply_reduction((input - target).abs(), reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _pointwise_kernel_check(input, target, "smooth_l1_cpu")
    d = input - target
    a = d.abs()
    loss = _C.where(a < beta, d * d * (0.5 / beta), a - 0.5 * beta)
    return _apply_reduction(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 * d**2 where |d| < delta, else delta * (|d| - 0.5 * delta), of d = input - target;
    times weight (of input's size) when given."""
    _target_size_warning(input, target)
    _check_broadcastable(input.shape, target.shape)
    if weight is not None and weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    if weight is None:
        reduction = _reduction_enum(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _pointwise_kernel_check(input, target, "huber_cpu")
    d = input - target
    a = d.abs()
    loss = _C.where(a < delta, d * d * 0.5, (a - 0.5 * delta) * delta)
    if weight is None:
        return _apply_reduction(loss, reduction)
    loss = loss * weight
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                         "'mean', 'sum'.")
    return _apply_reduction(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)); target broadcasts into input's shape."""
    reduction = _check_reduction(size_average, reduce, reduction)
    _check_into_input(input, target)
    return _apply_reduction((-input * target).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """-(target * logsigmoid(x) + (1 - target) * logsigmoid(-x)), times weight, averaged over
    the last (class) dim, then reduced."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _apply_reduction(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target == 1, max(0, margin - input) where target == -1 (both where
    target is neither, as PyTorch computes it), reduced."""
    reduction = _check_reduction(size_average, reduce, reduction)
    _check_same_broadcast(target, input)
    zeros = _pith.zeros_like(input)
    margin_clamp = (margin - input).clamp(min=0)
    loss = _C.where(target != 1, margin_clamp, zeros) + _C.where(target != -1, input, zeros)
    return _apply_reduction(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin), reduced."""
    reduction = _check_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.size()}, input2: "
                           f"{input2.size()}, target: {target.size()} ")
    _check_same_broadcast(input1, input2)
    _check_same_broadcast(target, input1 - input2)
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return _apply_reduction(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(input1, input2) where target == 1, max(0, cos - margin) where target == -1,
    with PyTorch's 1e-12 added to each squared magnitude; reduced."""
    reduction = _check_reduction(size_average, reduce, reduction)
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    sizes = f"{list(input1.shape)} and {list(input2.shape)}."
    if targ_dim == 1:
        if input1.dim() != 2 or input2.dim() != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs "
                               f"with sizes {sizes}")
    elif input1.dim() != 1 or input2.dim() != 1:
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {sizes}")
    _check_same_broadcast(input1, input2)
    prod_sum = (input1 * input2).sum(targ_dim)
    mag_square1 = (input1 * input1).sum(targ_dim) + 1e-12
    mag_square2 = (input2 * input2).sum(targ_dim) + 1e-12
    cos = prod_sum / (mag_square1 * mag_square2).sqrt()
    _check_same_broadcast(target, cos)
    zeros = _pith.zeros_like(cos)
    loss = _C.where(target == 1, 1 - cos, zeros) + \
        _C.where(target == -1, (cos - margin).clamp(min=0), zeros)
    return _apply_reduction(loss, reduction)


def _check_margin_input(input):
    ndims = input.dim()
    if not ((ndims == 2 and input.size(1) != 0) or (ndims == 1 and input.size(0) != 0)
            or ndims == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    if ndims <= 1:
        return 1, (1 if ndims == 0 else input.size(0))
    return input.size(0), input.size(1)


def _check_long_target(target):
    if target.dtype != _C.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype_name(target.dtype)}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """The multi-class hinge loss: for each sample, the sum over classes d != target of
    weight[target] * max(0, margin - x[target] + x[d]) ** p, divided by the class count."""
    reduction = _check_reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nframe, dim = _check_margin_input(input)
    if target.dim() > 1 or target.numel() != nframe:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal "
                           f"to the number of input samples (batch size). Expected target "
                           f"size [{nframe}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and (weight.dim() > 1 or weight.numel() != dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got "
                           f"{list(weight.shape)}")
    _check_float_kernel(input, "multi_margin_loss_cpu_kernel")
    _check_long_target(target)
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_name(input.dtype)} but found "
                           f"{_dtype_name(weight.dtype)}")
    x = input.reshape((nframe, dim))
    t = target.reshape((nframe,))
    if ((t < 0) | (t >= dim)).any():
        raise RuntimeError("target out of range")
    x_target = x.gather(1, t.unsqueeze(1))
    is_target = _C.arange(dim).unsqueeze(0) == t.unsqueeze(1)
    # relu's gradient is 0 at z == 0: PyTorch's kernel adds only where z > 0
    z = (margin - x_target + x).relu()
    if p == 2:
        z = z * z
    z = z.masked_fill(is_target, 0)
    if weight is not None:
        z = z * weight.index_select(0, t).unsqueeze(1)
    loss = z.sum(1) / dim
    if reduction == "none":
        return loss if target.dim() > 0 else loss.reshape(())
    return _apply_reduction(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """For each sample, the sum over its target classes j (target's indices up to the first
    negative one) and the classes i that are not targets of max(0, 1 - x[j] + x[i]),
    divided by the class count."""
    reduction = _check_reduction(size_average, reduce, reduction)
    nframe, dim = _check_margin_input(input)
    if input.dim() <= 1:
        if target.dim() > 1 or target.numel() != dim:
            raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                               f"size: {list(input.shape)}")
    elif target.dim() != 2 or target.size(0) != nframe or target.size(1) != dim:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    _check_float_kernel(input, "multilabel_margin_loss_forward_out_frame")
    _check_long_target(target)
    x = input.reshape((nframe, dim))
    t = target.reshape((nframe, dim))
    listed = (t < 0).to(_C.int64).cumsum(1) == 0  # the targets before the first negative one
    if (listed & (t >= dim)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    safe = t.masked_fill(~listed, 0)
    classes = _C.arange(dim)
    # is_target[n, i]: class i is one of sample n's listed targets
    is_target = ((safe.unsqueeze(2) == classes) & listed.unsqueeze(2)).any(1)
    x_target = x.gather(1, safe)  # (N, j)
    z = (1 - x_target.unsqueeze(2) + x.unsqueeze(1)).relu()  # (N, j, i)
    z = z.masked_fill(~(listed.unsqueeze(2) & ~is_target.unsqueeze(1)), 0)
    loss = z.sum((1, 2)) / dim
    if reduction == "none":
        return loss if target.dim() > 1 else loss.reshape(())
    return _apply_reduction(loss, reduction)


def _vector_norm(x, p, dim):
    """torch.norm(x, p, dim), whose gradient is 0 where the norm is 0."""
    a = x.abs()
    if p == math.inf:
        return a.amax(dim)
    if p == -math.inf:
        return a.amin(dim)
    if p == 0:
        return (a != 0).to(x.dtype).sum(dim)
    if p == 1:
        return a.sum(dim)
    if p == 2:
        s = (x * x).sum(dim)
        zero = s == 0
        return s.masked_fill(zero, 1).sqrt().masked_fill(zero, 0)
    # The exponents as 0-dim tensors of x's dtype: pow's backward of a Python float exponent
    # rounds it to float32 (docs/training.md, "Losses").
    power, root = (_C.tensor(e, dtype=x.dtype) for e in (float(p), 1.0 / p))
    s = a.masked_fill(a == 0, 1).pow(power).masked_fill(a == 0, 0).sum(dim)
    zero = s == 0
    return s.masked_fill(zero, 1).pow(root).masked_fill(zero, 0)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of x1 - x2 + eps over the last dim (of the broadcast shape)."""
    output_dim = max(x1.dim(), x2.dim())
    innermost = output_dim - 1
    _check_same_broadcast(x1, x2)
    distance = _vector_norm(x1 - x2 + eps, p, innermost if output_dim else ())
    return distance.unsqueeze(-1) if keepdim and output_dim else distance


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with the pairwise p-norm
    distance d; with swap, d(anchor, negative) is min'd with d(positive, negative)."""
    reduction = _check_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a_dim}D, "
                           f"positive {p_dim}D, and negative {n_dim}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = _C.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _apply_reduction((margin + dist_pos - dist_neg).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """triplet_margin_loss with any distance function (default pairwise_distance)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a_dim}D, "
                           f"positive {p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _C.minimum(dist_neg, distance_function(positive, negative))
    return _apply_reduction((margin + dist_pos - dist_neg).clamp(min=0), reduction)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target), with linear_weight
    (C, d1, ..., dK, in_features) for a K-dimensional loss: PyTorch's reference path. Its
    chunked path (options, a torch LinearCrossEntropyOptions) is not implemented."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if options is not None:
        raise NotImplementedError("linear_cross_entropy: the chunked path (options) is not "
                                  "implemented in pith; pass options=None")
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes),
                                               in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


def _lengths_list(lengths, name):
    # PyTorch's two overloads: a tensor of integers, or ints (a tuple, a list, an int).
    if isinstance(lengths, _C.Tensor):
        if lengths.dtype.is_floating_point or lengths.dtype == _C.bool or \
                lengths.dtype.is_complex:
            raise RuntimeError(f"{name} must be integral")
        return [int(v) for v in lengths.reshape(-1).tolist()]
    if isinstance(lengths, numbers.Integral):
        return [int(lengths)]
    return [int(v) for v in lengths]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The Connectionist Temporal Classification loss of log_probs (T, N, C), or (T, C)
    unbatched, against targets padded (N, S) or concatenated (sum(target_lengths),): the op
    _ctc_loss (kernels/loss_ctc.c, See Note [CTC loss]), whose derivative is PyTorch's
    _ctc_loss_backward. zero_infinity turns infinite losses (impossible alignments) and their
    gradients into 0; 'mean' divides each loss by its target length (at least 1) first."""
    reduction = _reduction_enum(reduction)
    if isinstance(input_lengths, _C.Tensor) != isinstance(target_lengths, _C.Tensor):
        # PyTorch's binder finds no overload (its message lists them)
        raise TypeError("ctc_loss() received an invalid combination of arguments: "
                        "input_lengths and target_lengths must both be Tensors or both be "
                        "ints")
    input_lengths = _lengths_list(input_lengths, "input_lengths")
    target_lengths = _lengths_list(target_lengths, "target_lengths")
    is_batched = log_probs.dim() == 3
    lp = log_probs if is_batched else log_probs.unsqueeze(1)
    res = _pith.ops.pith._ctc_loss(lp, targets.to(_C.int64), input_lengths, target_lengths,
                                   blank, zero_infinity)[0]
    if zero_infinity:
        res = _C.where(res == math.inf, _C.zeros((), dtype=res.dtype), res)
    if reduction == "mean":
        lengths = _C.tensor(target_lengths, dtype=res.dtype).clamp(min=1)
        return (res / lengths).mean()
    if reduction == "sum":
        return res.sum()
    return res if is_batched else res.squeeze(0)


# PyTorch's functionals hand their tensors' __torch_function__ the call first; these do
# through pith._C._overridable (Note [Function layer], python_bindings/_C/function_layer.c).
# The single-op ones are pith._C's functions, which do it themselves.
for _name in __all__:
    if type(globals()[_name]) is type(_dtype_name):
        globals()[_name] = _C._overridable(globals()[_name])
del _name
