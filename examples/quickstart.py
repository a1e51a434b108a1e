"""pith quickstart: a small MLP with pith.nn.

1. builds a 784-512-512-10 MLP with ReLU from pith.nn;
2. loads its weights from NumPy arrays with load_state_dict;
3. runs a batch of 32 and checks the result against the same network written in NumPy;
4. compiles it with pith.compile (the forward's bytecode becomes one fused graph) and checks
   that the compiled model gives the same bits;
5. prints the time per batch (median of many runs), eager and compiled, beside NumPy and
   PyTorch, when they are installed (PyTorch with pith's thread count).

    python examples/quickstart.py

Exits with status 1 if pith's result differs from NumPy's, or the compiled model's from
the eager one's.
"""
import os
import statistics
import sys
import time

import numpy as np

import pith
import pith.nn as nn

SIZES = (784, 512, 512, 10)
BATCH = 32


def pith_num_threads():
    get = getattr(pith, "get_num_threads", None)
    if get is not None:
        return get()
    return int(os.environ.get("PITH_NUM_THREADS") or os.cpu_count() or 1)


def numpy_weights(rng):
    """The state_dict of the MLP as float32 NumPy arrays, keyed as pith.nn names them."""
    weights = {}
    for layer, (n_in, n_out) in enumerate(zip(SIZES, SIZES[1:])):
        bound = 1 / np.sqrt(n_in)
        weights[f"{2 * layer}.weight"] = rng.uniform(-bound, bound, (n_out, n_in)).astype(
            np.float32)
        weights[f"{2 * layer}.bias"] = rng.uniform(-bound, bound, n_out).astype(np.float32)
    return weights


def build_mlp(lib):
    """The MLP with the layers of `lib` (pith.nn or torch.nn)."""
    layers = []
    for n_in, n_out in zip(SIZES, SIZES[1:]):
        layers += [lib.Linear(n_in, n_out), lib.ReLU()]
    return lib.Sequential(*layers[:-1])


def numpy_mlp(weights):
    layers = [(weights[f"{2 * i}.weight"].T.copy(), weights[f"{2 * i}.bias"])
              for i in range(len(SIZES) - 1)]

    def forward(x):
        for i, (w_t, b) in enumerate(layers):
            x = x @ w_t + b
            if i < len(layers) - 1:
                x = np.maximum(x, 0)
        return x
    return forward


def median_seconds(fn, budget=0.4, min_runs=10):
    """The median time of fn() over at least min_runs runs or about `budget` seconds."""
    for _ in range(3):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < min_runs or time.perf_counter() - start < budget:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= 5000:
            break
    return statistics.median(times)


def torch_forward(weights, x_np, threads):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    model = build_mlp(torch.nn).eval()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
    x = torch.from_numpy(x_np)

    def forward():
        with torch.inference_mode():
            return model(x)
    return forward


def main():
    rng = np.random.default_rng(0)
    weights = numpy_weights(rng)
    x_np = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)

    model = build_mlp(nn)
    print(model)
    model.load_state_dict(weights)
    model.eval()
    x = pith.tensor(x_np)

    out = np.asarray(model(x))
    expected = numpy_mlp(weights)(x_np)
    try:
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    except AssertionError as e:
        print(f"FAILED: pith's output differs from NumPy's:\n{e}", file=sys.stderr)
        return 1
    print(f"\noutput {tuple(out.shape)} matches NumPy "
          f"(max abs difference {np.abs(out - expected).max():.2e})")

    compiled = pith.compile(model)
    start = time.perf_counter()
    with pith.no_grad():
        compiled_out = compiled(x)
    first_call = time.perf_counter() - start
    if not bool((compiled_out == model(x)).all()):
        print("FAILED: the compiled model's output differs from the eager one's",
              file=sys.stderr)
        return 1
    stats = pith.compiler.stats()
    print(f"pith.compile: the same bits; first call (translation and compilation included) "
          f"{first_call * 1e3:.2f} ms, {stats['compiles']} compile, "
          f"{stats['frames_skipped']} frames run eagerly")

    threads = pith_num_threads()
    print(f"\ntime per batch of {BATCH} ({threads} thread{'s' * (threads != 1)}), "
          "median:")
    pith_time = median_seconds(lambda: model(x))
    rows = [("pith", pith_time), ("pith.compile", median_seconds(lambda: compiled(x)))]
    numpy_forward = numpy_mlp(weights)
    rows.append(("NumPy", median_seconds(lambda: numpy_forward(x_np))))
    torch_fn = torch_forward(weights, x_np, threads)
    if torch_fn is not None:
        rows.append(("PyTorch", median_seconds(torch_fn)))
    for name, seconds in rows:
        ratio = "" if name == "pith" else f"   (pith/{name} = {pith_time / seconds:.2f})"
        print(f"  {name:13s}{seconds * 1e6:10.1f} us{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
