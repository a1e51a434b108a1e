from .activation import (
    ELU, GELU, Hardtanh, LeakyReLU, LogSigmoid, ReLU, ReLU6, SiLU, Sigmoid, Softmax, Softplus,
    Tanh,
)
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .normalization import LayerNorm
from .sparse import Embedding

__all__ = ["Module", "Identity", "Linear", "ReLU", "ReLU6", "LeakyReLU", "ELU", "Hardtanh",
           "Softplus", "LogSigmoid", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LayerNorm",
           "Embedding", "Dropout", "Flatten", "Unflatten", "Sequential", "ModuleList",
           "ModuleDict", "ParameterList", "ParameterDict", "L1Loss", "MSELoss", "NLLLoss",
           "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss"]
