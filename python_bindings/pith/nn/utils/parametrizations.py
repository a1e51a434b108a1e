"""Parametrizations in the shape of torch.nn.utils.parametrizations: weight_norm.
(orthogonal and spectral_norm are not in pith: they need linalg factorizations pith lacks.)
"""
from ..modules.module import Module
from . import parametrize
from ._norms import norm_except_dim, weight_norm as _weight_norm_fn

__all__ = ["weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm_fn(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        weight_g = norm_except_dim(weight, 2, self.dim)
        weight_v = weight
        return weight_g, weight_v


def weight_norm(module, name="weight", dim=0):
    """Weight normalization (https://arxiv.org/abs/1602.07868) as a parametrization:
    module.<name> = g * v / ||v||, the norm over every dim but `dim` (dim=None: over all),
    with g = module.parametrizations.<name>.original0 and v = ...original1. A state_dict
    of the older nn.utils.weight_norm (<name>_g, <name>_v) loads into it."""
    _weight_norm = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, _weight_norm, unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        g_key = f"{prefix}{name}_g"
        v_key = f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            original0 = state_dict.pop(g_key)
            original1 = state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = original0
            state_dict[f"{prefix}parametrizations.{name}.original1"] = original1

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module
