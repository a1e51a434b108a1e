from .activation import GELU, ReLU, SiLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .dropout import Dropout
from .linear import Identity, Linear
from .module import Module
from .normalization import LayerNorm
from .sparse import Embedding

__all__ = ["Module", "Identity", "Linear", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid",
           "Softmax", "LayerNorm", "Embedding", "Dropout", "Sequential", "ModuleList",
           "ModuleDict"]
