"""pith.nn: modules and functional ops in the shape of torch.nn, written in Python over
pith's operators; their parameters require grad, and backward goes through pith's
autograd (docs/autograd.md)."""
from . import functional, init, parallel
from .modules import (
    ELU, GELU, BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, Dropout, Embedding, Flatten,
    Hardtanh, Identity, L1Loss, LayerNorm, LeakyReLU, Linear, LogSigmoid, Module, ModuleDict,
    ModuleList, MSELoss, NLLLoss, ParameterDict, ParameterList, ReLU, ReLU6, Sequential,
    Sigmoid, SiLU, Softmax, Softplus, Tanh, Unflatten,
)
from .modules import (
    CosineEmbeddingLoss, CTCLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss,
    LinearCrossEntropyLoss, MarginRankingLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
    MultiMarginLoss, NLLLoss2d, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .parallel import DataParallel
from .parameter import Parameter

__all__ = ["functional", "init", "parallel", "Parameter", "Module", "Identity", "Linear",
           "ReLU", "ReLU6", "LeakyReLU", "ELU", "Hardtanh", "Softplus", "LogSigmoid", "GELU",
           "SiLU", "Tanh", "Sigmoid", "Softmax", "LayerNorm", "Embedding", "Dropout",
           "Flatten", "Unflatten", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict", "L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss",
           "DataParallel"]
__all__ += ["utils"]


def __getattr__(name):
    # pith.nn.utils is imported on first use: its parametrizations need contextlib and
    # copy, which `import pith.nn` does not load (tests/python/test_import_cost.py).
    if name == "utils":
        import sys
        __import__("pith.nn.utils")  # as pith.__getattr__ (`from . import` would recurse)
        return sys.modules["pith.nn.utils"]
    raise AttributeError(f"module 'pith.nn' has no attribute '{name}'")

__all__ += ["NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss",
            "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss",
            "SoftMarginLoss", "LinearCrossEntropyLoss", "MultiLabelSoftMarginLoss",
            "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
            "TripletMarginWithDistanceLoss", "CTCLoss"]
