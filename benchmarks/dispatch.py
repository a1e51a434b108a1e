"""benchmarks/dispatch.py — the cost of __pith_dispatch__, side by side with PyTorch's
__torch_dispatch__, in one run:

  - a pass-through wrapper subclass, `w + w` on 1 element: PyTorch's canonical wrapper
    (`elem` inside; unwrap, call, rewrap), written the same way in both libraries;
  - `w.detach()` on that wrapper;
  - a pass-through dispatch mode: the time of `a + b` (1 element) inside the mode minus the
    time without it, i.e. what the mode adds per op.

    PYTHONPATH=/work/build-x-rel/pypath python benchmarks/dispatch.py [--quick]

Times are the best of several repeats of a timed loop (microseconds per call). Use a
Release build; the machine is shared, so compare the ratios rather than the absolute times.
Results: benchmarks/dispatch_results.md.
"""
import argparse
import platform
import sys
import timeit


def pith_cases():
    import pith
    from pith.utils import DispatchMode

    class Wrapper(pith.Tensor):
        @staticmethod
        def __new__(cls, elem):
            r = pith.Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(),
                                                   dtype=elem.dtype, device=elem.device)
            r.elem = elem
            return r

        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(e):
                return e.elem if isinstance(e, Wrapper) else e

            def wrap(e):
                return Wrapper(e) if isinstance(e, pith.Tensor) else e

            args = tuple(unwrap(a) for a in args)
            kwargs = {k: unwrap(v) for k, v in (kwargs or {}).items()}
            return wrap(func(*args, **kwargs))

    class PassThrough(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    return pith, Wrapper, PassThrough, pith.ones(1)


def torch_cases():
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class Wrapper(torch.Tensor):
        @staticmethod
        def __new__(cls, elem):
            r = torch.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(),
                                                    dtype=elem.dtype, device=elem.device)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(e):
                return e.elem if isinstance(e, Wrapper) else e

            def wrap(e):
                return Wrapper(e) if isinstance(e, torch.Tensor) else e

            args = tuple(unwrap(a) for a in args)
            kwargs = {k: unwrap(v) for k, v in (kwargs or {}).items()}
            return wrap(func(*args, **kwargs))

    class PassThrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    return torch, Wrapper, PassThrough, torch.ones(1)


def best_us(stmt, number, repeat):
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e6


def measure(cases, number, repeat):
    lib, Wrapper, PassThrough, one = cases()
    w = Wrapper(one.clone())
    a, b = one.clone(), one.clone()
    out = {}
    out["wrapper w + w"] = best_us(lambda: w + w, number, repeat)
    out["wrapper w.detach()"] = best_us(lambda: w.detach(), number, repeat)
    plain = best_us(lambda: a + b, number * 4, repeat)
    mode = PassThrough()
    with mode:
        moded = best_us(lambda: a + b, number, repeat)
    out["plain a + b"] = plain
    out["a + b in a pass-through mode"] = moded
    out["mode cost per op"] = moded - plain
    return lib.__version__, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    opts = parser.parse_args()
    number, repeat = (2000, 3) if opts.quick else (20000, 7)
    pith_version, p = measure(pith_cases, number, repeat)
    try:
        torch_version, t = measure(torch_cases, number, repeat)
    except ImportError:
        torch_version, t = None, None
    print(f"Python {platform.python_version()} on {platform.machine()}; pith {pith_version}; "
          f"torch {torch_version}")
    print(f"{'case':34} {'pith us':>9} {'torch us':>9} {'pith/torch':>11}")
    for key, value in p.items():
        other = t[key] if t else float("nan")
        print(f"{key:34} {value:9.2f} {other:9.2f} {value / other:11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
