"""benchmarks/autograd.py — autograd beside PyTorch eager, in one run, same thread count:

  - the recording surcharge of `a + b` on 1 element: the time with requires_grad on both
    leaves minus the time without, with the leaves kept (their accumulators alive) and
    with fresh leaves each call (accumulators made again);
  - `(a + b).sum().backward()`: the time of forward + backward minus forward alone;
  - a chain of 100 `y = y * c`: (forward + backward - forward) / 100, per node;
  - an MLP 784-512-512-10 (ReLU), forward + cross-entropy + backward, batch 1 and 32;
  - `a + b` (1 element) without grad, the ops that must not have got slower.

    PYTHONPATH=<build>/pypath python benchmarks/autograd.py [--rounds N] [--threads T]

Each round times a block of each variant, pith's and PyTorch's interleaved, and the
reported figure is the median over rounds (of times in microseconds, and of the per-round
ratio pith / PyTorch), because the machine is shared and noisy. Results:
benchmarks/autograd_results.md.
"""
import argparse
import statistics
import sys
import time


def block(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def cases(lib, is_torch):
    F = lib.nn.functional
    one_a, one_b = lib.ones(1), lib.ones(1)
    ga = lib.ones(1, requires_grad=True)
    gb = lib.ones(1, requires_grad=True)

    def add_plain():
        return one_a + one_b

    def add_grad_kept():
        return ga + gb

    def add_grad_fresh():
        a = one_a.detach().requires_grad_()
        b = one_b.detach().requires_grad_()
        return a + b

    def add_plain_fresh():
        a = one_a.detach()
        b = one_b.detach()
        return a + b

    def sum_forward():
        return (ga + gb).sum()

    def sum_backward():
        (ga + gb).sum().backward()

    x = lib.ones(1, requires_grad=True)

    def chain_forward():
        y = x
        for _ in range(100):
            y = y * 1.0001
        return y

    def chain_backward():
        chain_forward().sum().backward()

    lib.manual_seed(0)
    mlp = lib.nn.Sequential(lib.nn.Linear(784, 512), lib.nn.ReLU(), lib.nn.Linear(512, 512),
                            lib.nn.ReLU(), lib.nn.Linear(512, 10))
    data = {b: (lib.randn(b, 784), lib.randint(0, 10, (b,))) for b in (1, 32)}

    def mlp_step(b):
        inputs, target = data[b]

        def step():
            mlp.zero_grad()
            F.cross_entropy(mlp(inputs), target).backward()
        return step

    return {
        "add_plain": add_plain, "add_grad_kept": add_grad_kept,
        "add_grad_fresh": add_grad_fresh, "add_plain_fresh": add_plain_fresh,
        "sum_forward": sum_forward, "sum_backward": sum_backward,
        "chain_forward": chain_forward, "chain_backward": chain_backward,
        "mlp_1": mlp_step(1), "mlp_32": mlp_step(32),
    }


# figure: (description, [(variant, sign, scale)], per-call block size)
FIGURES = [
    ("recording surcharge of a + b, leaves kept (us)",
     [("add_grad_kept", 1, 1), ("add_plain", -1, 1)], 2000),
    ("recording surcharge of a + b, fresh leaves (us)",
     [("add_grad_fresh", 1, 1), ("add_plain_fresh", -1, 1)], 2000),
    ("(a + b).sum().backward(), backward minus forward (us)",
     [("sum_backward", 1, 1), ("sum_forward", -1, 1)], 500),
    ("100-node chain, backward per node (us)",
     [("chain_backward", 1, 0.01), ("chain_forward", -1, 0.01)], 20),
    ("MLP 784-512-512-10, batch 1, forward + cross-entropy + backward (us)",
     [("mlp_1", 1, 1)], 20),
    ("the same, batch 32 (us)", [("mlp_32", 1, 1)], 10),
    ("a + b without grad (us)", [("add_plain", 1, 1)], 2000),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    import pith
    import torch
    torch.set_num_threads(args.threads)
    pith.set_num_threads(args.threads)
    libs = {"pith": cases(pith, False), "torch": cases(torch, True)}
    for lib in libs.values():  # warm up
        for fn in lib.values():
            for _ in range(3):
                fn()
    samples = {name: {"pith": [], "torch": []} for name, _, _ in FIGURES}
    for _ in range(args.rounds):
        for name, parts, n in FIGURES:
            for which in ("pith", "torch"):
                total = 0.0
                for variant, sign, scale in parts:
                    total += sign * scale * block(libs[which][variant], n)
                samples[name][which].append(total)
    print(f"# autograd, {args.rounds} rounds, {args.threads} thread(s), "
          f"torch {torch.__version__}, python {sys.version.split()[0]}")
    print("| figure | pith | torch | pith / torch (median of rounds) |")
    print("|---|---|---|---|")
    for name, _, _ in FIGURES:
        p, t = samples[name]["pith"], samples[name]["torch"]
        ratios = [a / b for a, b in zip(p, t) if b > 0]
        print(f"| {name} | {statistics.median(p):.2f} | {statistics.median(t):.2f} | "
              f"{statistics.median(ratios):.2f}x |")


if __name__ == "__main__":
    main()
