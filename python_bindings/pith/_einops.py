"""pith's backend for einops (docs/python.md "einops").

einops finds a backend by walking the subclasses of `einops._backends.AbstractBackend` and
taking the one whose `framework_name` is in `sys.modules` and which accepts the tensor. So
the backend exists once its class is defined; see Note [Registering the einops backend]
for when that happens. Nothing here imports einops unless einops is being imported anyway.
"""
import sys

# Note [Registering the einops backend]
# `import pith` must not import einops (it is optional, and import time is budgeted), and
# einops may be imported before or after pith. So:
# - if `einops._backends` is already in sys.modules when pith is imported, the backend
#   class is defined at once;
# - otherwise a finder at the front of sys.meta_path waits for `einops._backends`, lets
#   the real finders locate it, and wraps its loader so that the backend is defined right
#   after the module has run. The finder removes itself then, so it costs one string
#   comparison per import until einops arrives, and nothing after.
# einops caches backends by tensor type, and defines none for a type it has not seen, so
# a backend defined after einops's first use still serves pith tensors from then on.

_BACKEND_MODULE = "einops._backends"


_backend_class = None  # held here: einops sees subclasses through weak references


def _define_backend(backends):
    """Defines PithBackend as a subclass of einops's AbstractBackend (once)."""
    global _backend_class
    if _backend_class is not None:
        return _backend_class

    class PithBackend(backends.AbstractBackend):
        framework_name = "pith"

        def __init__(self):
            import pith
            self.pith = pith

        def is_appropriate_type(self, tensor):
            return isinstance(tensor, self.pith.Tensor)

        def from_numpy(self, x):
            return self.pith.from_numpy(x)

        def to_numpy(self, x):
            return x.detach().cpu().numpy()

        def arange(self, start, stop):
            return self.pith.arange(start, stop, dtype=self.pith.int64)

        def shape(self, x):
            return x.shape

        def reshape(self, x, shape):
            return x.reshape(shape)

        def reduce(self, x, operation, reduced_axes):
            if operation == "min":
                return x.amin(dim=reduced_axes)
            if operation == "max":
                return x.amax(dim=reduced_axes)
            if operation == "sum":
                return x.sum(dim=reduced_axes)
            if operation == "mean":
                return x.mean(dim=reduced_axes)
            if operation in ("any", "all", "prod"):
                # One dim at a time, from the last, as these take a single dim.
                for axis in sorted(reduced_axes, reverse=True):
                    x = getattr(x, operation)(dim=axis)
                return x
            raise NotImplementedError(f"einops reduction {operation!r} on pith tensors")

        def transpose(self, x, axes):
            return x.permute(axes)

        def stack_on_zeroth_dimension(self, tensors):
            return self.pith.stack(tensors)

        def add_axis(self, x, new_position):
            return self.pith.unsqueeze(x, new_position)

        def add_axes(self, x, n_axes, pos2len):
            # New axes are expanded views, not copies, as with torch.
            sizes = [-1] * n_axes
            for position, length in pos2len.items():
                x = self.add_axis(x, position)
                sizes[position] = length
            return x.expand(sizes)

        def tile(self, x, repeats):
            return x.repeat(repeats)

        def concat(self, tensors, axis):
            return self.pith.cat(tensors, dim=axis)

        def is_float_type(self, x):
            return x.dtype.is_floating_point

        def layers(self):
            from . import einops as layers
            return layers

        def einsum(self, pattern, *x):
            return self.pith.einsum(pattern, *x)

    _backend_class = PithBackend
    return PithBackend


class _RegisteringLoader:
    """Runs einops._backends with the real loader, then defines the pith backend."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _define_backend(module)

    def __getattr__(self, name):  # get_source, is_package, ... of the real loader
        return getattr(self._loader, name)


class _EinopsFinder:
    """Waits at the front of sys.meta_path for einops._backends (Note [Registering the
    einops backend])."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _BACKEND_MODULE:
            return None
        _uninstall_finder()
        import importlib.util
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _RegisteringLoader(spec.loader)
        return spec


_finder = None


def _uninstall_finder():
    global _finder
    if _finder is not None:
        try:
            sys.meta_path.remove(_finder)
        except ValueError:
            pass
        _finder = None


def install():
    """Called by `import pith` (Note [Registering the einops backend])."""
    global _finder
    backends = sys.modules.get(_BACKEND_MODULE)
    if backends is not None:
        _define_backend(backends)
    elif _finder is None:
        _finder = _EinopsFinder()
        sys.meta_path.insert(0, _finder)
