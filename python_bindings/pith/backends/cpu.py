"""pith.backends.cpu: the instruction set of pith's vectorised math kernels (exp, tanh, gelu,
pow, ...), chosen at run time: See Note [CPU capability] (kernels/vecmath.h)."""
from .. import _C

__all__ = ["get_cpu_capability"]

# PyTorch's names for the same three levels (its "DEFAULT" is the build's baseline, SSE2 on
# x86-64).
_TORCH_NAMES = {"sse2": "DEFAULT", "avx2": "AVX2", "avx512": "AVX512"}


def get_cpu_capability() -> str:
    """"DEFAULT" (SSE2), "AVX2" or "AVX512", as torch.backends.cpu.get_cpu_capability()
    spells them: the best this CPU supports, unless the environment variable
    PITH_CPU_CAPABILITY (sse2 or default, avx2, avx512) asked for less when pith loaded."""
    name = _C._get_cpu_capability()
    return _TORCH_NAMES.get(name, name.upper())
