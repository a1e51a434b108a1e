from .activation import (
    ELU, GELU, Hardtanh, LeakyReLU, LogSigmoid, ReLU, ReLU6, SiLU, Sigmoid, Softmax, Softplus,
    Tanh,
)
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .loss import (
    CosineEmbeddingLoss, CTCLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss,
    LinearCrossEntropyLoss, MarginRankingLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
    MultiMarginLoss, NLLLoss2d, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .module import Module
from .normalization import LayerNorm
from .sparse import Embedding

__all__ = ["Module", "Identity", "Linear", "ReLU", "ReLU6", "LeakyReLU", "ELU", "Hardtanh",
           "Softplus", "LogSigmoid", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LayerNorm",
           "Embedding", "Dropout", "Flatten", "Unflatten", "Sequential", "ModuleList",
           "ModuleDict", "ParameterList", "ParameterDict", "L1Loss", "MSELoss", "NLLLoss",
           "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss"]
__all__ += ["NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss",
            "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss",
            "SoftMarginLoss", "LinearCrossEntropyLoss", "MultiLabelSoftMarginLoss",
            "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
            "TripletMarginWithDistanceLoss", "CTCLoss"]
