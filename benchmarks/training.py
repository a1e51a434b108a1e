"""benchmarks/training.py — training figures beside PyTorch, in one run, same thread count.

  - mlp: one SGD step (momentum 0.9) of an MLP 784-512-512-10 (ReLU): zero_grad, forward,
    cross-entropy, backward, step; at batch 1 and 32, pith eager beside torch eager, and at
    batch 1 also beside torch.compile's steady state (the model compiled; the first calls,
    which compile, are not timed);
  - nanogpt: one AdamW step of a nanoGPT-style model (4 layers, d=256, 8 heads, context
    128, batch 8, vocabulary 65, weight tying, decay and no-decay groups as nanoGPT's
    configure_optimizers): zero_grad, forward with the loss, backward, step;
  - adam: one Adam step over 10M float32 parameters in 100 tensors (100,000 elements each):
    pith's `pith._fused_adam_` (one call for all; it increments the steps itself) against
    torch's `torch.optim.Adam(foreach=True)` and `Adam(fused=True)` steps on the same
    sizes, and the bandwidth that `pith.add(a, b, out=c)` reaches on the same bytes. An
    Adam step reads param, grad, exp_avg and exp_avg_sq and writes param, exp_avg and
    exp_avg_sq: 7 x 4 bytes per element, 280 MB per step; add(out=) moves 3 x 4 bytes per
    element, so it runs over 7/3 as many elements (23.3M) to move the same 280 MB.

    PYTHONPATH=<build>/pypath python benchmarks/training.py [--rounds N] [--threads T]
        [--only mlp|nanogpt|adam] [--no-compile]

Each round times each variant once, interleaved (the machine is shared and noisy); the
figures are medians over the rounds, of times and of the per-round ratios. With 2 threads
set OMP_WAIT_POLICY=PASSIVE (benchmarks/autograd.py says why).
"""
import argparse
import statistics
import time

import training_models

ELEMENTS, TENSORS = 10_000_000, 100
ADAM = dict(lr=1e-3, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8)


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def adam_variants(pith, torch):
    per = ELEMENTS // TENSORS
    gen = torch.Generator().manual_seed(0)

    def pith_state():
        params = [pith.randn(per) for _ in range(TENSORS)]
        grads = [pith.randn(per) for _ in range(TENSORS)]
        m = [pith.zeros(per) for _ in range(TENSORS)]
        v = [pith.zeros(per) for _ in range(TENSORS)]
        steps = [pith.zeros(()) for _ in range(TENSORS)]
        return params, grads, m, v, steps

    params, grads, m, v, steps = pith_state()

    def pith_adam():
        pith._fused_adam_(params, grads, m, v, [], steps, amsgrad=False, maximize=False,
                          **ADAM)

    def torch_optimizer(**kw):
        ps = [torch.randn(per, generator=gen).requires_grad_() for _ in range(TENSORS)]
        for p in ps:
            p.grad = torch.randn(per, generator=gen)
        opt = torch.optim.Adam(ps, lr=ADAM["lr"], betas=(ADAM["beta1"], ADAM["beta2"]),
                               eps=ADAM["eps"], **kw)
        opt.step()  # the state exists before timing
        return opt.step

    torch_foreach = torch_optimizer(foreach=True)
    torch_fused = torch_optimizer(fused=True)

    # add(out=) over the same bytes: 3 tensors of ELEMENTS * 7 / 3 elements.
    n_add = ELEMENTS * 7 // 3
    a, b, c = pith.randn(n_add), pith.randn(n_add), pith.empty(n_add)

    def pith_add():
        pith.add(a, b, out=c)

    pith_adam()  # warm up (the steps start at 1 either way)
    pith_add()
    return {"pith _fused_adam_": pith_adam, "torch Adam(foreach=True)": torch_foreach,
            "torch Adam(fused=True)": torch_fused, "pith add(out=), same bytes": pith_add}


def run_adam(pith, torch, rounds):
    variants = adam_variants(pith, torch)
    times = {k: [] for k in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            times[name].append(timed(fn))
    med = {k: statistics.median(t) for k, t in times.items()}
    nbytes = ELEMENTS * 7 * 4
    ours = times["pith _fused_adam_"]
    print(f"\nAdam step, {ELEMENTS / 1e6:.0f}M float32 parameters in {TENSORS} tensors "
          f"({nbytes / 1e6:.0f} MB moved per step)")
    for name, t in med.items():
        print(f"  {name:32s} {t * 1e3:8.2f} ms  {nbytes / t / 1e9:6.2f} GB/s")
    for other in ("torch Adam(foreach=True)", "torch Adam(fused=True)"):
        ratio = statistics.median(a / b for a, b in zip(ours, times[other]))
        print(f"  pith / {other:26s} {ratio:6.3f}x (median of per-round ratios)")
    share = statistics.median(b / a for a, b in zip(ours, times["pith add(out=), same bytes"]))
    print(f"  pith Adam bandwidth / add(out=) bandwidth: {share * 100:5.1f}%")


def interleaved(variants, rounds, per_round):
    """{name: [seconds per call, one per round]}: each round times `per_round` calls of each
    variant in turn."""
    times = {k: [] for k in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            t0 = time.perf_counter()
            for _ in range(per_round):
                fn()
            times[name].append((time.perf_counter() - t0) / per_round)
    return times


def report(title, times, ours, peers, unit=1e6, label="us"):
    print(f"\n{title}")
    for name, t in times.items():
        print(f"  {name:34s} {statistics.median(t) * unit:10.1f} {label}")
    for other in peers:
        ratio = statistics.median(a / b for a, b in zip(times[ours], times[other]))
        print(f"  {ours} / {other}: {ratio:.2f}x (median of per-round ratios)")


def run_mlp(pith, torch, rounds, with_compile):
    for batch, per_round in ((1, 50), (32, 10)):
        variants = {"pith": training_models.sgd_step(pith, training_models.mlp(pith), batch),
                    "torch eager": training_models.sgd_step(torch, training_models.mlp(torch),
                                                            batch)}
        if with_compile and batch == 1:
            compiled = training_models.sgd_step(torch, training_models.mlp(torch), batch,
                                                compiled=True)
            for _ in range(20):  # compiles the forward and the backward, then settles
                compiled()
            variants["torch.compile"] = compiled
        for fn in variants.values():
            for _ in range(3):
                fn()
        report(f"MLP 784-512-512-10, one SGD step, batch {batch}",
               interleaved(variants, rounds, per_round), "pith",
               [k for k in variants if k != "pith"])


def run_nanogpt(pith, torch, rounds):
    variants = {"pith": training_models.adamw_step(pith),
                "torch eager": training_models.adamw_step(torch)}
    for fn in variants.values():
        for _ in range(2):
            fn()
    report("nanoGPT-style model (4 layers, d=256, 8 heads, context 128, batch 8), one AdamW "
           "step", interleaved(variants, rounds, 1), "pith", ["torch eager"], 1e3, "ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-compile", action="store_true", help="leave out torch.compile")
    args = ap.parse_args()
    import torch

    import pith
    torch.set_num_threads(args.threads)
    pith.set_num_threads(args.threads)
    print(f"threads: pith {pith.get_num_threads()}, torch {torch.get_num_threads()}; "
          f"rounds {args.rounds}")
    if args.only in "mlp":
        run_mlp(pith, torch, args.rounds, not args.no_compile)
    if args.only in "nanogpt":
        run_nanogpt(pith, torch, args.rounds)
    if args.only in "adam":
        run_adam(pith, torch, args.rounds)


if __name__ == "__main__":
    main()
