"""benchmarks/autograd.py — autograd beside PyTorch eager, in one run, same thread count:

  - the recording surcharge of `a + b` on 1 element: the time with requires_grad on both
    leaves minus the time without, with the leaves kept (their accumulators alive) and
    with fresh leaves each call (accumulators made again);
  - `(a + b).sum().backward()`: the time of forward + backward minus forward alone;
  - a chain of 100 `y = y * c`: (forward + backward - forward) / 100, per node;
  - an MLP 784-512-512-10 (ReLU), forward + cross-entropy + backward, batch 1 and 32;
  - a GPT block (d=256, seq 64, 4 heads, GELU MLP 4d, causal scaled_dot_product_attention,
    pre-LayerNorm residual; one nn.Module class run with either library), batch 8:
    forward + backward of `block(x).sum()`, backward alone (timed around `.backward()`
    only), and the bytes of storage saved for backward, through saved_tensors_hooks;
  - `a + b` (1 element) without grad, the ops that must not have got slower.

    PYTHONPATH=<build>/pypath python benchmarks/autograd.py [--rounds N] [--threads T]
        [--only SUBSTRING] [--parts]

--parts times the GPT block's parts alone instead (LayerNorm, GELU, attention, the four
Linears), forward and `.sum().backward()`, the best of the rounds: where a difference
comes from. With 2 threads set OMP_WAIT_POLICY=PASSIVE: pith and PyTorch each bring an
OpenMP runtime whose idle threads spin, and in one process on a busy 2-core machine each
spins while the other works (both then run many times slower).

Each round times a block of each variant, pith's and PyTorch's interleaved, and the
reported figure is the median over rounds (of times in microseconds, and of the per-round
ratio pith / PyTorch), because the machine is shared and noisy. Results:
benchmarks/autograd_results.md.
"""
import argparse
import importlib
import statistics
import sys
import time


def block(fn, n):
    if getattr(fn, "self_timed", False):  # it returns the seconds of the part it times
        return sum(fn() for _ in range(n)) / n * 1e6
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def gpt_block(lib, d=256, heads=4):
    """A pre-LayerNorm GPT block (nanoGPT's layout), written once for either library."""
    nn = lib.nn
    F = nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = heads
            self.ln_1 = nn.LayerNorm(d)
            self.c_attn = nn.Linear(d, 3 * d)
            self.c_proj = nn.Linear(d, d)
            self.ln_2 = nn.LayerNorm(d)
            self.c_fc = nn.Linear(d, 4 * d)
            self.gelu = nn.GELU()
            self.mlp_proj = nn.Linear(4 * d, d)

        def forward(self, x):
            B, T, C = x.shape
            H = self.heads
            q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
            q = q.view(B, T, H, C // H).transpose(1, 2)
            k = k.view(B, T, H, C // H).transpose(1, 2)
            v = v.view(B, T, H, C // H).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.c_proj(y)
            return x + self.mlp_proj(self.gelu(self.c_fc(self.ln_2(x))))

    return Block()


def gpt_data(lib):
    lib.manual_seed(0)
    return gpt_block(lib), lib.randn(8, 64, 256).requires_grad_()


def _storage_key(lib, t):
    """(address, bytes) of the storage under t: torch's untyped_storage(), or for pith the
    base address (data_ptr - storage_offset * itemsize) and _C._storage_nbytes."""
    if hasattr(t, "untyped_storage"):
        s = t.untyped_storage()
        return s.data_ptr(), s.nbytes()
    base = t.data_ptr() - t.storage_offset() * t.element_size()
    return base, lib._C._storage_nbytes(t)


def saved_bytes(lib):
    """Bytes of the distinct storages the GPT block's forward saves for backward, counted
    through saved_tensors_hooks: (without the parameters' storages, all of them, count).
    None when the library has no saved_tensors_hooks."""
    try:
        graph = importlib.import_module(lib.__name__ + ".autograd.graph")
    except ImportError:
        return None
    hooks = getattr(graph, "saved_tensors_hooks", None)
    if hooks is None:
        return None
    model, x = gpt_data(lib)
    params = {_storage_key(lib, p)[0] for p in model.parameters()}
    seen = {}

    def pack(t):
        address, nbytes = _storage_key(lib, t)
        seen[address] = nbytes
        return t

    with hooks(pack, lambda t: t):
        y = model(x)
    y.sum().backward()  # the hooks' unpack runs here; the graph is then freed
    return (sum(n for a, n in seen.items() if a not in params), sum(seen.values()), len(seen))


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

    gpt, gx = gpt_data(lib)

    def gpt_step():
        gpt.zero_grad()
        gx.grad = None
        gpt(gx).sum().backward()

    def gpt_forward():
        gpt.zero_grad()
        gx.grad = None
        return gpt(gx).sum()

    def gpt_backward():
        loss = gpt_forward()
        t0 = time.perf_counter()
        loss.backward()
        return time.perf_counter() - t0
    gpt_backward.self_timed = True

    return {
        "gpt_step": gpt_step, "gpt_backward": gpt_backward,
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
    ("GPT block, batch 8, forward + backward (us)", [("gpt_step", 1, 1)], 3),
    ("GPT block, batch 8, backward alone (us)", [("gpt_backward", 1, 1)], 3),
]


def gpt_parts(lib):
    """The GPT block's parts alone, at its sizes: name -> a function returning an output."""
    nn = lib.nn
    F = nn.functional
    lib.manual_seed(0)
    x = lib.randn(8, 64, 256).requires_grad_()
    h = lib.randn(8, 64, 1024).requires_grad_()
    qkv = lib.randn(8, 64, 768).requires_grad_()
    ln = nn.LayerNorm(256)

    def attention():
        q, k, v = (t.view(8, 64, 4, 64).transpose(1, 2) for t in qkv.split(256, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return y.transpose(1, 2).contiguous().view(8, 64, 256)

    parts = {"LayerNorm(256)": lambda: ln(x), "GELU on (8, 64, 1024)": lambda: F.gelu(h),
             "causal attention, 4 heads": attention}
    for d_in, d_out, inp in ((256, 768, x), (256, 256, x), (256, 1024, x), (1024, 256, h)):
        linear = nn.Linear(d_in, d_out)
        parts[f"Linear({d_in}, {d_out})"] = (lambda m, i: lambda: m(i))(linear, inp)
    return parts


def run_parts(pith, torch, rounds):
    libs = {"pith": gpt_parts(pith), "torch": gpt_parts(torch)}
    best = {name: {k: float("inf") for k in ("pf", "pb", "tf", "tb")} for name in libs["pith"]}
    for _ in range(rounds):
        for name in best:
            for which, key in (("pith", "p"), ("torch", "t")):
                t0 = time.perf_counter()
                y = libs[which][name]()
                t1 = time.perf_counter()
                y.sum().backward()
                t2 = time.perf_counter()
                b = best[name]
                b[key + "f"] = min(b[key + "f"], (t1 - t0) * 1e6)
                b[key + "b"] = min(b[key + "b"], (t2 - t1) * 1e6)
    print("| part (best of rounds, us) | pith forward | torch forward | pith backward | "
          "torch backward | backward pith / torch |")
    print("|---|---|---|---|---|---|")
    for name, b in best.items():
        print(f"| {name} | {b['pf']:.0f} | {b['tf']:.0f} | {b['pb']:.0f} | {b['tb']:.0f} | "
              f"{b['pb'] / b['tb']:.2f}x |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", default="", help="run only the figures naming this substring")
    ap.add_argument("--parts", action="store_true", help="time the GPT block's parts alone")
    args = ap.parse_args()
    figures = [f for f in FIGURES if args.only.lower() in f[0].lower()]
    import pith
    import torch
    torch.set_num_threads(args.threads)
    pith.set_num_threads(args.threads)
    if args.parts:
        print(f"# the GPT block's parts, {args.rounds} rounds, {args.threads} thread(s)")
        run_parts(pith, torch, args.rounds)
        return
    libs = {"pith": cases(pith, False), "torch": cases(torch, True)}
    used = {variant for _, parts, _ in figures for variant, _, _ in parts}
    for lib in libs.values():  # warm up
        for variant, fn in lib.items():
            if variant in used:
                for _ in range(3):
                    fn()
    samples = {name: {"pith": [], "torch": []} for name, _, _ in figures}
    for _ in range(args.rounds):
        for name, parts, n in figures:
            for which in ("pith", "torch"):
                total = 0.0
                for variant, sign, scale in parts:
                    total += sign * scale * block(libs[which][variant], n)
                samples[name][which].append(total)
    print(f"# autograd, {args.rounds} rounds, {args.threads} thread(s), "
          f"torch {torch.__version__}, python {sys.version.split()[0]}")
    print("| figure | pith | torch | pith / torch (median of rounds) |")
    print("|---|---|---|---|")
    for name, _, _ in figures:
        p, t = samples[name]["pith"], samples[name]["torch"]
        ratios = [a / b for a, b in zip(p, t) if b > 0]
        print(f"| {name} | {statistics.median(p):.2f} | {statistics.median(t):.2f} | "
              f"{statistics.median(ratios):.2f}x |")
        if "backward alone" in name:
            print(f"| {name}, best round | {min(p):.2f} | {min(t):.2f} | "
                  f"{min(p) / min(t):.2f}x |")
    if "gpt" in args.only.lower() or not args.only:
        counts = {"pith": saved_bytes(pith), "torch": saved_bytes(torch)}
        print()
        print("| GPT block, storages saved for backward | pith | torch | pith / torch |")
        print("|---|---|---|---|")
        for label, i in (("bytes, without the parameters' storages", 0),
                         ("bytes, all", 1), ("distinct storages", 2)):
            p, t = counts["pith"], counts["torch"]
            ratio = f"{p[i] / t[i]:.2f}x" if p is not None else "n/a"
            print(f"| {label} | {p[i] if p is not None else 'n/a'} | {t[i]} | {ratio} |")


if __name__ == "__main__":
    main()
