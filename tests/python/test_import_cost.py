"""What `import pith` imports (docs/python.md "Import cost"): statements about sys.modules
in fresh interpreters, never timings (benchmarks/import_time.py measures the time).

The standard modules below are imported where pith uses them, not by `import pith`; the
submodules are public attributes imported on first use (PEP 562), and still work as
attributes, through `from pith import ...` and through `import pith.<name>`.
"""
import functools
import inspect
import json
import os
import subprocess
import sys
import textwrap

import pytest

import pith
from pith import _grad_mode

# Standard modules that `import pith` used to import (or that their importers bring).
STDLIB_NOT_IMPORTED = [
    "inspect", "typing", "dataclasses", "enum", "re", "functools", "contextlib", "threading",
    "warnings", "copy", "copyreg", "weakref", "types", "importlib", "ast", "dis", "tokenize",
    "linecache", "collections.abc", "numbers", "numpy",
]
# pith's submodules that are imported on first use.
SUBMODULES_NOT_IMPORTED = [
    "pith.nn", "pith.compiler", "pith.serialization", "pith.safetensors", "pith.amp",
    "pith.cuda", "pith.backends", "pith.accelerator", "pith.__config__", "pith.einops",
    "pith.utils.data", "pith.utils.checkpoint", "pith._tensor_str", "pith._dtype_info",
]


def run_python(code):
    """Runs `code` in a fresh interpreter with pith on the path; returns the JSON of its last
    stdout line."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def imported_by_pith():
    """The modules that `import pith` adds to sys.modules, in a fresh interpreter."""
    return set(run_python("""
        import json, sys
        before = set(sys.modules)
        import pith
        print(json.dumps(sorted(set(sys.modules) - before)))
    """))


@pytest.mark.parametrize("module", STDLIB_NOT_IMPORTED)
def test_import_pith_does_not_import_stdlib_module(imported_by_pith, module):
    assert module not in imported_by_pith


@pytest.mark.parametrize("module", SUBMODULES_NOT_IMPORTED)
def test_import_pith_does_not_import_submodule(imported_by_pith, module):
    assert module not in imported_by_pith


def test_import_pith_imports_its_eager_modules(imported_by_pith):
    assert {"pith", "pith._C", "pith._grad_mode", "pith._openmp_env", "pith.utils",
            "pith.library"} <= imported_by_pith


def test_lazy_submodules_work_as_before():
    result = run_python("""
        import json, sys
        import pith
        seen = {}
        seen["nn"] = pith.nn.Linear(2, 3).weight.shape == (3, 2)
        from pith import nn, utils
        seen["from_import"] = nn is sys.modules["pith.nn"] and utils is pith.utils
        import pith.nn.functional as F
        seen["import_submodule"] = F is pith.nn.functional
        seen["utils_data"] = (pith.utils.data.DataLoader
                              is sys.modules["pith.utils.data"].DataLoader)
        seen["compile"] = pith.compile is sys.modules["pith.compiler"].compile
        seen["compiled"] = pith.compile(lambda x: x + 1)(pith.ones(2)).tolist() == [2.0, 2.0]
        seen["save"] = pith.save is sys.modules["pith.serialization"].save
        seen["amp"] = pith.autocast is pith.amp.autocast
        seen["backends"] = pith.backends is sys.modules["pith.backends"]
        seen["printoptions"] = (pith.set_printoptions
                                is sys.modules["pith._tensor_str"].set_printoptions)
        seen["finfo"] = pith.finfo(pith.float32).eps == 2.0 ** -23
        seen["iinfo"] = pith.iinfo(pith.int8).max == 127
        print(json.dumps(seen))
    """)
    assert result == dict.fromkeys(result, True) and len(result) == 12


def test_openblas_is_loaded_by_the_first_product_not_by_import():
    # Note [OpenBLAS is loaded on first use] (kernels/linalg_blas.c): `import pith` and
    # elementwise work map no OpenBLAS; the first matrix product loads it.
    result = run_python("""
        import json
        def mapped():
            with open("/proc/self/maps") as f:
                return "libopenblas" in f.read()
        import pith
        seen = [mapped()]
        x = pith.ones(3, 3)
        (x + x).sum()
        seen.append(mapped())
        seen.append((x @ x)[0, 0].item())
        seen.append(mapped())
        print(json.dumps(seen))
    """)
    assert result == [False, False, 3.0, True]


def test_compiling_an_nn_model_imports_none_of_the_heavy_stdlib_modules():
    # benchmarks/import_time.py's "pith MLP" process: pith.nn and pith.compile on the way.
    result = run_python("""
        import json, sys
        before = set(sys.modules)
        import pith
        nn = pith.nn
        model = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 2)).eval()
        with pith.no_grad():
            y = pith.compile(model)(pith.ones(1, 8))
        print(json.dumps([list(y.shape)] + sorted(
            m for m in ("inspect", "typing", "dataclasses", "enum", "re", "importlib",
                        "contextlib", "threading", "copy", "numpy")
            if m in sys.modules and m not in before)))
    """)
    assert result == [[1, 2]]


def test_grad_mode_decorating_plain_functions_imports_no_inspect():
    result = run_python("""
        import json, sys
        before = set(sys.modules)
        import pith

        @pith.no_grad
        def f():
            return pith.is_grad_enabled()

        @pith.inference_mode()
        def g():
            yield pith.is_inference_mode_enabled()

        with pith.enable_grad():
            grad = pith.is_grad_enabled()
        print(json.dumps([f(), list(g()), grad, pith.is_grad_enabled(),
                          "inspect" in sys.modules and "inspect" not in before,
                          "typing" in sys.modules and "typing" not in before]))
    """)
    assert result == [False, [True], True, True, False, False]


def _generator_function():
    yield 1


def _plain_function():
    return 1


async def _async_generator_function():
    yield 1


class _Methods:
    def generator(self):
        yield 1

    def plain(self):
        return 1


@pytest.mark.parametrize("func", [
    _generator_function, _plain_function, _async_generator_function, lambda: 1,
    _Methods().generator, _Methods().plain, _Methods.generator,
    functools.partial(_generator_function), functools.partial(_plain_function),
    len, _Methods, functools.wraps(_generator_function)(lambda: 1),
], ids=repr)
def test_generator_function_check_agrees_with_inspect(func):
    assert _grad_mode._is_generator_function(func) is inspect.isgeneratorfunction(func)


def test_decorating_a_partial_of_a_generator_function_wraps_each_step():
    gen = pith.no_grad()(functools.partial(_grad_enabled_steps, 2))
    assert list(gen()) == [False, False]


def _grad_enabled_steps(n):
    for _ in range(n):
        yield pith.is_grad_enabled()


def test_op_packets_are_made_on_first_use():
    # pith/_ops.py makes pith.ops's packets on the first look into pith.ops, or at an
    # OpOverload's first .overloadpacket (a __pith_dispatch__ handler's `func`), not at import.
    result = run_python("""
        import json
        import pith
        seen = [pith._ops._seen == 0]
        class Spy(pith.Tensor):
            @classmethod
            def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
                seen.append(repr(func.overloadpacket))
                return func(*[a.as_subclass(pith.Tensor) if isinstance(a, Spy) else a
                              for a in args], **(kwargs or {}))
        x = pith.ones(2).as_subclass(Spy)
        x.neg()
        seen.append(pith.ops.pith.neg.default is pith.ops.pith.neg.default)
        seen.append(pith.ops.pith.add.Tensor.overloadpacket is pith.ops.pith.add)
        print(json.dumps(seen))
    """)
    assert result == [True, "pith.ops.pith.neg", True, True]
