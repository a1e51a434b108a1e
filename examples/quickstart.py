"""pith quickstart: a small MLP with pith.nn.

1. builds a 784-512-512-10 MLP with ReLU from pith.nn;
2. loads its weights from NumPy arrays with load_state_dict;
3. runs a batch of 32 and checks the result against the same network written in NumPy;
4. compiles it with pith.compile (the forward's bytecode becomes one fused graph) and checks
   that the compiled model gives the same bits;
5. prints the time per batch (median of many runs), eager and compiled, beside NumPy and
   PyTorch, when they are installed (PyTorch with pith's thread count);
6. trains a small classifier with pith.optim on a data set it makes itself (three spirals
   of 2-D points): cross-entropy, backward, Adam, a step schedule; prints the loss as it
   falls and the time per training step, beside PyTorch training the same network from the
   same weights on the same batches (and their final losses).

    python examples/quickstart.py

Exits with status 1 if pith's result differs from NumPy's, the compiled model's from the
eager one's, or training does not bring the loss below a quarter of where it started.
`PITH_DEMO_QUICK=1` shortens the timings (the tests run the demo that way).
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
QUICK = bool(os.environ.get("PITH_DEMO_QUICK"))


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
    if QUICK:
        budget, min_runs = 0.0, 3
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
    return train(threads)


# ---- 6. training --------------------------------------------------------------------------
CLASSES, POINTS, TRAIN_BATCH, EPOCHS = 3, 600, 60, 30


def spirals(rng):
    """Three interleaved spirals of 2-D points with a little noise, and their labels."""
    per = POINTS // CLASSES
    radius = np.linspace(0.05, 1.0, per)
    points, labels = [], []
    for c in range(CLASSES):
        angle = np.linspace(c * 2 * np.pi / CLASSES, c * 2 * np.pi / CLASSES + 3.5, per)
        angle = angle + rng.normal(0, 0.15, per)
        points.append(np.stack([radius * np.sin(angle), radius * np.cos(angle)], 1))
        labels.append(np.full(per, c))
    order = rng.permutation(POINTS)
    return (np.concatenate(points)[order].astype(np.float32),
            np.concatenate(labels)[order].astype(np.int64))


def classifier(lib):
    """2 -> 64 -> 64 -> 3 with ReLU, in `lib`'s nn (pith or torch)."""
    nn = lib.nn
    return nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, CLASSES))


def fit(lib, weights, x_np, y_np):
    """Trains the classifier in `lib` from `weights`: returns (losses per epoch, the
    median seconds of one step). The batches are the same slices in either library."""
    model = classifier(lib)
    model.load_state_dict({k: lib.from_numpy(v.copy()) for k, v in weights.items()})
    model.train()
    opt = lib.optim.Adam(model.parameters(), lr=0.01)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
    loss_fn = lib.nn.CrossEntropyLoss()
    x, y = lib.from_numpy(x_np), lib.from_numpy(y_np)
    losses, times = [], []
    for _ in range(EPOCHS):
        total = 0.0
        for start in range(0, POINTS, TRAIN_BATCH):
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = loss_fn(model(x[start:start + TRAIN_BATCH]), y[start:start + TRAIN_BATCH])
            loss.backward()
            opt.step()
            times.append(time.perf_counter() - t0)
            total += loss.item()
        sched.step()
        losses.append(total / (POINTS // TRAIN_BATCH))
    return losses, statistics.median(times)


def train(threads):
    rng = np.random.default_rng(1)
    x_np, y_np = spirals(rng)
    pith.manual_seed(0)
    weights = {k: v.detach().numpy().copy() for k, v in classifier(pith).state_dict().items()}
    print(f"\ntraining a 2-64-64-{CLASSES} classifier on {POINTS} points of {CLASSES} "
          f"spirals: Adam, StepLR, batches of {TRAIN_BATCH}, {EPOCHS} epochs")
    losses, step_time = fit(pith, weights, x_np, y_np)
    for epoch in range(0, EPOCHS, 5):
        print(f"  epoch {epoch:2d}  loss {losses[epoch]:.4f}")
    print(f"  epoch {EPOCHS - 1:2d}  loss {losses[-1]:.4f}")
    rows = [("pith", step_time, losses[-1])]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(threads)
        torch_losses, torch_time = fit(torch, weights, x_np, y_np)
        rows.append(("PyTorch", torch_time, torch_losses[-1]))
    print("time per training step (zero_grad, forward, loss, backward, Adam), median:")
    for name, seconds, final in rows:
        ratio = "" if name == "pith" else f"   (pith/{name} = {step_time / seconds:.2f})"
        print(f"  {name:13s}{seconds * 1e6:10.1f} us   final loss {final:.4f}{ratio}")
    if not losses[-1] < losses[0] / 4:
        print(f"FAILED: training did not bring the loss down ({losses[0]:.4f} -> "
              f"{losses[-1]:.4f})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
