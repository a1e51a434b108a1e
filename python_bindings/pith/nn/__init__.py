"""pith.nn: modules and functional ops in the shape of torch.nn, written in Python over
pith's operators. There is no autograd yet: modules run forward passes, and Parameter's
requires_grad is accepted but reads False."""
from . import functional, init
from .modules import (
    GELU, Dropout, Embedding, Identity, LayerNorm, Linear, Module, ModuleDict, ModuleList,
    ReLU, Sequential, Sigmoid, SiLU, Softmax, Tanh,
)
from .parameter import Parameter

__all__ = ["functional", "init", "Parameter", "Module", "Identity", "Linear", "ReLU", "GELU",
           "SiLU", "Tanh", "Sigmoid", "Softmax", "LayerNorm", "Embedding", "Dropout",
           "Sequential", "ModuleList", "ModuleDict"]
