"""pith: a tensor library on a C core, shaped like PyTorch.

This package is thin: pith._C holds the tensor type and the operators; this file
re-exports them and adds the methods and functions generated from the op schemas
(see _ops.py). Importing pith never imports NumPy.
"""
from . import _openmp_env
with _openmp_env.loading_defaults():  # Note [OpenMP wait policy]
    from . import _C
from ._C import (  # noqa: F401
    InterpreterError, PithError, PithTypeError, Size, Tensor, arange, dtype, empty, full,
    get_default_dtype,
    get_num_threads, manual_seed, ones, rand, randn, set_default_dtype, set_num_threads, tensor,
    zeros,
)
from ._C import (  # noqa: F401
    bfloat16, bool, float16, float32, float64, int8, int16, int32, int64, uint8,
)
from ._C import (  # noqa: F401  (random generators: Note [Generators])
    Generator, default_generator, get_rng_state, initial_seed, seed, set_rng_state,
)
from ._C import as_tensor, from_dlpack, from_numpy, frombuffer  # noqa: F401
from ._C import from_shared, share  # noqa: F401  (hand tensors across interpreters)
from . import _ops
from ._ops import ops  # noqa: F401

from . import _api

_ops.install_methods(globals())
_api.install(globals())
# Devices, grad mode and the process settings (docs/python.md "Devices and grad mode").
from ._C import device  # noqa: F401,E402
from ._grad_mode import (  # noqa: F401,E402
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)
from ._flags import (  # noqa: F401,E402
    are_deterministic_algorithms_enabled, get_default_device, get_deterministic_debug_mode,
    get_float32_matmul_precision, is_deterministic_algorithms_warn_only_enabled,
    set_default_device, set_deterministic_debug_mode, set_float32_matmul_precision,
    use_deterministic_algorithms,
)
from . import _tensor  # noqa: F401,E402  (installs copy and pickle)
from . import utils, library  # noqa: F401,E402  (__pith_dispatch__: modes, custom ops)
from . import _einops  # noqa: E402
_einops.install()  # einops finds pith's backend (Note [Registering the einops backend])

# PyTorch's aliases.
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16

__version__ = "0.1.0"


# Imported on first use (PEP 562), as `import pith.nn` would: `import pith` stays within its
# import-time budget (docs/python.md, "Import cost"). A name maps to the submodule it is
# (None) or lives in.
_LAZY = {"nn": None, "autograd": None, "cuda": None, "backends": None, "accelerator": None, "amp": None,
         "__config__": None, "show_config": "__config__",
         "autocast": "amp", "is_autocast_enabled": "amp",
         "serialization": None, "safetensors": None, "einops": None,
         "save": "serialization", "load": "serialization",
         "compiler": None, "compile": "compiler",
         "is_anomaly_enabled": "autograd.anomaly_mode",
         "is_anomaly_check_nan_enabled": "autograd.anomaly_mode",
         "set_anomaly_enabled": "autograd.anomaly_mode",
         "set_printoptions": "_tensor_str", "finfo": "_dtype_info", "iinfo": "_dtype_info",
         "overrides": None,
         "optim": None}


def __getattr__(name):
    if name in _LAZY:
        import sys
        qualified = f"pith.{_LAZY[name] or name}"
        try:
            __import__(qualified)  # importlib.import_module, without importing importlib
        except ImportError as e:
            if name != "einops":
                raise
            # pith.einops needs the optional einops package: without it the attribute does
            # not exist (hasattr is False), and `import pith.einops` says why.
            raise AttributeError(f"module 'pith' has no attribute 'einops' ({e})") from e
        module = sys.modules[qualified]
        return module if _LAZY[name] is None else getattr(module, name)
    raise AttributeError(f"module 'pith' has no attribute {name!r}")
