"""pith.nn.utils, as torch.nn.utils: gradient clipping, parameters <-> vector, and
parametrizations (parametrize, parametrizations.weight_norm, the older weight_norm).
The rest of torch.nn.utils (rnn, stateless, fusion, spectral_norm, ...) is not in pith.
"""
from . import parametrizations, parametrize
from .clip_grad import (
    _clip_grads_with_norm_ as clip_grads_with_norm_,
    _get_total_norm as get_total_norm,
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grads_with_norm_", "clip_grad_value_",
           "get_total_norm", "parameters_to_vector", "parametrizations", "parametrize",
           "remove_weight_norm", "vector_to_parameters", "weight_norm"]
