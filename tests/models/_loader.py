"""Imports a program written against torch so that its `import torch` gets pith.

See Note [Loading torch programs on pith] below.
"""
import builtins
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

# Note [Loading torch programs on pith]
# The model programs of tests/models are other people's packages (installed from PyPI) and
# tutorial-style scripts of ours, all written against plain torch and never edited. To run
# one on pith, `load(name, "pith")` imports its module again under a private name,
# `_on_pith.<name>`, with a `__builtins__` of its own whose `__import__` resolves
# - `torch` and `torch.<sub>` to `pith` and `pith.<sub>`;
# - `einops.layers.torch` (einops's torch layers, which import torch themselves) to
#   `pith.einops`, the same layers for pith (docs/python.md "einops");
# - the program's own package to its private copy, so that its absolute imports stay inside
#   the copy.
# Nothing else changes: `sys.modules['torch']` is never touched, so real torch, when it is
# installed, stays importable beside it and serves as the oracle (`load(name, "torch")`
# imports a private copy that keeps torch). Only the module asked for and the modules of
# its package that it imports are run; a package's `__init__` runs only when the package
# itself is imported, because some `__init__`s import everything (vit_pytorch's imports
# torchvision, which cannot be installed beside this machine's torch).

PREFIXES = {"pith": "_on_pith", "torch": "_on_torch"}


def _pith_name(name):
    """The module that `name` resolves to on pith, or None when it is not torch's."""
    if name == "torch" or name.startswith("torch."):
        return "pith" + name[len("torch"):]
    if name == "einops.layers.torch":
        return "pith.einops"
    return None


class _Finder(importlib.abc.MetaPathFinder):
    """Finds `_on_<framework>.<name>` as the module `name` is found, without importing it."""

    def find_spec(self, fullname, path=None, target=None):
        for framework, prefix in PREFIXES.items():
            if fullname == prefix:
                spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
                spec.submodule_search_locations = []
                return spec
            if fullname.startswith(prefix + "."):
                return self._spec(framework, prefix, fullname[len(prefix) + 1:])
        return None

    @staticmethod
    def _spec(framework, prefix, name):
        parent, _, leaf = name.rpartition(".")
        if parent:
            search = sys.modules[f"{prefix}.{parent}"].__path__
            original = importlib.machinery.PathFinder.find_spec(name, search)
        else:
            original = importlib.machinery.PathFinder.find_spec(name)
        if original is None or original.origin is None:
            return None
        loader = _Loader(framework, prefix, name.split(".")[0], original)
        spec = importlib.util.spec_from_file_location(
            f"{prefix}.{name}", original.origin, loader=loader,
            submodule_search_locations=original.submodule_search_locations)
        return spec


class _Loader(importlib.abc.Loader):
    def __init__(self, framework, prefix, root, original):
        self.framework, self.prefix, self.root, self.original = framework, prefix, root, original

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__dict__["__builtins__"] = _builtins_for(self.framework, self.prefix, self.root)
        with open(self.original.origin, "rb") as f:
            source = f.read()
        code = compile(source, self.original.origin, "exec", dont_inherit=True)
        exec(code, module.__dict__)


def _builtins_for(framework, prefix, root):
    namespace = dict(builtins.__dict__)
    real_import = builtins.__import__

    def resolve(name):
        if name == root or name.startswith(root + "."):
            return f"{prefix}.{name}"
        if framework == "pith":
            return _pith_name(name)
        return None

    def program_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0:
            target = resolve(name)
            if target is not None:
                module = real_import(target, globals, locals, fromlist, 0)
                if fromlist:
                    return module
                # `import torch.nn` binds the top-level name, which must be what `torch`
                # resolves to (pith), or the copy of the package (its top level).
                top = name.partition(".")[0]
                return sys.modules[resolve(top)]
        return real_import(name, globals, locals, fromlist, level)

    namespace["__import__"] = program_import
    return namespace


def _parents(prefix, name):
    """Creates the copies of `name`'s parent packages without running their __init__."""
    parts = name.split(".")
    importlib.import_module(prefix)
    for i in range(1, len(parts)):
        package = f"{prefix}.{'.'.join(parts[:i])}"
        if package in sys.modules:
            continue
        original = importlib.util.find_spec(".".join(parts[:i]))
        if original is None or original.submodule_search_locations is None:
            raise ImportError(f"{'.'.join(parts[:i])} is not an installed package")
        module = types.ModuleType(package)
        module.__path__ = list(original.submodule_search_locations)
        module.__package__ = package
        sys.modules[package] = module


_FINDER = _Finder()


def load(name, framework):
    """Imports the module `name` (dotted, installed) with torch resolved to `framework`."""
    if framework not in PREFIXES:
        raise ValueError(f"framework must be 'pith' or 'torch', not {framework!r}")
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    prefix = PREFIXES[framework]
    _parents(prefix, name)
    return importlib.import_module(f"{prefix}.{name}")


def load_file(path, framework):
    """Imports the program file `path` (a script of tests/models/programs) on `framework`."""
    import os
    name = "program_" + os.path.splitext(os.path.basename(path))[0]
    prefix = PREFIXES[framework]
    full = f"{prefix}.{name}"
    if full in sys.modules:
        return sys.modules[full]
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    importlib.import_module(prefix)
    spec = importlib.util.spec_from_file_location(full, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__["__builtins__"] = _builtins_for(framework, prefix, name)
    sys.modules[full] = module
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    try:
        exec(code, module.__dict__)
    except BaseException:
        del sys.modules[full]
        raise
    return module
