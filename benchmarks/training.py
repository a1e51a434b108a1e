"""benchmarks/training.py — training figures beside PyTorch, in one run, same thread count.

  - adam: one Adam step over 10M float32 parameters in 100 tensors (100,000 elements each):
    pith's `pith._fused_adam_` (one call for all; it increments the steps itself) against
    torch's `torch.optim.Adam(foreach=True)` and `Adam(fused=True)` steps on the same
    sizes, and the bandwidth that `pith.add(a, b, out=c)` reaches on the same bytes. An
    Adam step reads param, grad, exp_avg and exp_avg_sq and writes param, exp_avg and
    exp_avg_sq: 7 x 4 bytes per element, 280 MB per step; add(out=) moves 3 x 4 bytes per
    element, so it runs over 7/3 as many elements (23.3M) to move the same 280 MB.

    PYTHONPATH=<build>/pypath python benchmarks/training.py [--rounds N] [--threads T]
        [--only adam]

Each round times each variant once, interleaved (the machine is shared and noisy); the
figures are medians over the rounds, of times and of the per-round ratios. With 2 threads
set OMP_WAIT_POLICY=PASSIVE (benchmarks/autograd.py says why).
"""
import argparse
import statistics
import time

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    import torch

    import pith
    torch.set_num_threads(args.threads)
    pith.set_num_threads(args.threads)
    print(f"threads: pith {pith.get_num_threads()}, torch {torch.get_num_threads()}; "
          f"rounds {args.rounds}")
    if args.only in "adam":
        variants = adam_variants(pith, torch)
        times = {k: [] for k in variants}
        for _ in range(args.rounds):
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


if __name__ == "__main__":
    main()
