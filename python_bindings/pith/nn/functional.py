"""pith.nn.functional: the functional forms of the nn layers, as torch.nn.functional (names,
keyword names, defaults, exception types), written over pith's operators.

linear, gelu, layer_norm, embedding, softmax and log_softmax are single pith ops; dropout,
nll_loss and cross_entropy are compositions of them.
"""
import math
import warnings

import pith as _pith  # partly initialised when pith imports nn; looked up at call time

from .. import _C

__all__ = ["relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax", "layer_norm",
           "linear", "embedding", "dropout", "nll_loss", "cross_entropy"]

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

def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


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


# ---- losses --------------------------------------------------------------------------------

_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _check_reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


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
    input, target = _check_class_target(input, target)
    class_dim = 0 if input.dim() == 1 else 1
    losses, w, ignored = _nll(input, target, weight, ignore_index, class_dim, n_classes)
    return _reduce_weighted(losses, w, ignored, reduction)


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
