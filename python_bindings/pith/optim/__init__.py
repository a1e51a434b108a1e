"""pith.optim: PyTorch's torch.optim. The optimizers update every parameter of a param group
in one call of a multi-tensor C kernel (pith._fused_<name>_) by default; foreach=False or
differentiable=True runs torch's per-parameter formula with pith ops. See docs/training.md,
"pith.optim"."""
from . import lr_scheduler as lr_scheduler  # noqa: F401
from . import optimizer  # noqa: F401
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .lbfgs import LBFGS

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "LBFGS"]
