"""einops's layers as pith.nn modules: `Rearrange`, `Reduce` and `EinMix`.

`einops.layers.torch` imports torch and subclasses `torch.nn.Module`, so it stays torch's
own (docs/python.md "einops"). These are the same layers for pith, built as einops builds
its layers for every framework: einops's mixins parse the pattern, pith.nn.Module holds the
parameters, and the pith backend (`pith._einops`) applies the recipe. `backend.layers()`
for a pith tensor returns this module. Needs einops installed.
"""
try:
    from einops.layers import RearrangeMixin, ReduceMixin
    from einops.layers._einmix import _EinmixMixin
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("pith.einops needs the einops package (pip install einops)") from e

from . import _einops
from . import nn as _nn
from . import einsum as _einsum, zeros as _zeros

import einops._backends

_einops._define_backend(einops._backends)

__all__ = ["Rearrange", "Reduce", "EinMix"]


class Rearrange(RearrangeMixin, _nn.Module):
    """einops.rearrange as a module: `Rearrange('b c h w -> b (c h w)')`."""

    def forward(self, input):
        return self._apply_recipe(input)


class Reduce(ReduceMixin, _nn.Module):
    """einops.reduce as a module: `Reduce('b c h w -> b c', 'mean')`."""

    def forward(self, input):
        return self._apply_recipe(input)


class EinMix(_EinmixMixin, _nn.Module):
    """einops's EinMix: an einsum with a learned weight (and bias), as a module."""

    def _create_parameters(self, weight_shape, weight_bound, bias_shape, bias_bound):
        self.weight = _nn.Parameter(_zeros(weight_shape).uniform_(-weight_bound, weight_bound))
        if bias_shape is not None:
            self.bias = _nn.Parameter(_zeros(bias_shape).uniform_(-bias_bound, bias_bound))
        else:
            self.bias = None

    def _create_rearrange_layers(self, pre_reshape_pattern, pre_reshape_lengths,
                                 post_reshape_pattern, post_reshape_lengths):
        self.pre_rearrange = None
        if pre_reshape_pattern is not None:
            self.pre_rearrange = Rearrange(pre_reshape_pattern, **pre_reshape_lengths)
        self.post_rearrange = None
        if post_reshape_pattern is not None:
            self.post_rearrange = Rearrange(post_reshape_pattern, **post_reshape_lengths)

    def forward(self, input):
        if self.pre_rearrange is not None:
            input = self.pre_rearrange(input)
        result = _einsum(self.einsum_pattern, input, self.weight)
        if self.bias is not None:
            result += self.bias
        if self.post_rearrange is not None:
            result = self.post_rearrange(result)
        return result
