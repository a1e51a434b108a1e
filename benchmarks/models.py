"""Model benchmarks: pith against PyTorch eager (and NumPy for the MLP), 1 and 2 threads.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=build/pypath \\
        python benchmarks/models.py [--rounds R] [--quick] [--out DIR]

Each library runs in worker processes of its own (torch brings its own OpenMP runtime, and
two spinning pools on two cores measure nothing), started by this driver, which
interleaves them round by round: in every round each (library, thread count) worker runs
every case once, in an order that rotates between rounds, so a noisy machine slows them
alike. A worker sets the thread count before importing its library (PITH_NUM_THREADS,
OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS, and set_num_threads; NumPy's BLAS
pinned with threadpoolctl when it is installed), builds every model with the same weights
(drawn with NumPy from the parameter's name), warms up, and reports the median time of a
forward pass and a checksum of the output, which the driver compares across libraries.
The table (medians over rounds of the workers' medians, and ratios to PyTorch) and the
environment go to DIR/models_results.md (default: benchmarks/).

The models are written here, in the style of public architectures, with the ops pith has
(manual attention with a `tril` mask, LayerNorm, GELU): a GPT (minGPT/nanoGPT layout), a
ViT-style encoder (patches by reshape and a Linear), and the 784-512-512-10 MLP.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import zlib

import numpy as np

LIBS = ("pith", "torch", "numpy")
ENV_SHOWN = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
             "PYTHONPATH")


# ---- the models (written against a torch-like library `lib`) ------------------------------

def gpt_model(lib, n_layer=4, n_embd=256, n_head=8, vocab=512, block=256):
    nn, F = lib.nn, lib.nn.functional

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.register_buffer("bias", lib.tril(lib.ones(block, block))
                                 .view(1, 1, block, block))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = SelfAttention()
            self.ln_2 = nn.LayerNorm(n_embd)
            self.c_fc = nn.Linear(n_embd, 4 * n_embd)
            self.gelu = nn.GELU()
            self.mlp_proj = nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp_proj(self.gelu(self.c_fc(self.ln_2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, n_embd)
            self.wpe = nn.Embedding(block, n_embd)
            self.h = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.wte.weight = self.lm_head.weight

        def forward(self, idx):
            t = idx.size(1)
            x = self.wte(idx) + self.wpe(lib.arange(t))
            for blk in self.h:
                x = blk(x)
            return self.lm_head(self.ln_f(x))

    return GPT()


def vit_model(lib, image=32, patch=4, dim=192, depth=4, heads=8, mlp=768, classes=10):
    nn, F = lib.nn, lib.nn.functional
    n_patches = (image // patch) ** 2

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            B, N, C = x.shape
            qkv = self.qkv(x).reshape(B, N, 3, heads, C // heads).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            att = F.softmax((q @ k.transpose(-2, -1)) * (C // heads) ** -0.5, dim=-1)
            return self.proj((att @ v).transpose(1, 2).reshape(B, N, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim)
            self.attn = Attention()
            self.norm2 = nn.LayerNorm(dim)
            self.fc1 = nn.Linear(dim, mlp)
            self.act = nn.GELU()
            self.fc2 = nn.Linear(mlp, dim)

        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            return x + self.fc2(self.act(self.fc1(self.norm2(x))))

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch_embed = nn.Linear(3 * patch * patch, dim)
            self.cls_token = nn.Parameter(lib.zeros(1, 1, dim))
            self.pos_embed = nn.Parameter(lib.zeros(1, n_patches + 1, dim))
            self.blocks = nn.ModuleList([Block() for _ in range(depth)])
            self.norm = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, classes)

        def forward(self, img):
            B, C, H, W = img.shape
            p = patch
            x = img.reshape(B, C, H // p, p, W // p, p).permute(0, 2, 4, 3, 5, 1)
            x = self.patch_embed(x.reshape(B, (H // p) * (W // p), p * p * C))
            x = lib.cat([self.cls_token.expand(B, -1, -1), x], dim=1) + self.pos_embed
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.norm(x)[:, 0])

    return ViT()


def mlp_model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def _weights(name, shape):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def _set_weights(lib, model):
    for name, value in model.state_dict().items():
        value.copy_(lib.from_numpy(_weights(name, tuple(value.shape))))


# (name, builder, input shape, input kind); inputs are drawn with NumPy too.
CASES = [
    ("GPT 4x256, batch 4x64", gpt_model, (4, 64), "tokens"),
    ("GPT 4x256, batch 4x256", gpt_model, (4, 256), "tokens"),
    ("ViT 192x4, 8 images 32x32", vit_model, (8, 3, 32, 32), "images"),
    ("MLP 784-512-512-10, batch 1", mlp_model, (1, 784), "images"),
    ("MLP 784-512-512-10, batch 32", mlp_model, (32, 784), "images"),
    ("MLP 784-512-512-10, batch 256", mlp_model, (256, 784), "images"),
]


def _input(shape, kind):
    rng = np.random.default_rng(1)
    if kind == "tokens":
        return rng.integers(0, 512, size=shape).astype(np.int64)
    return rng.standard_normal(shape).astype(np.float32)


def _numpy_mlp(x, ws):
    h = np.maximum(x @ ws[0].T + ws[1], 0)
    h = np.maximum(h @ ws[2].T + ws[3], 0)
    return h @ ws[4].T + ws[5]


# ---- the worker --------------------------------------------------------------------------

def worker(lib_name, threads, case_names, seconds):
    for var in ("PITH_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    results = {}
    if lib_name == "numpy":
        try:
            from threadpoolctl import threadpool_limits
            threadpool_limits(threads)
        except ImportError:
            pass
    else:
        lib = __import__(lib_name)
        lib.set_num_threads(threads)
    for name, builder, shape, kind in CASES:
        if name not in case_names:
            continue
        x_np = _input(shape, kind)
        if lib_name == "numpy":
            if builder is not mlp_model:
                continue
            ws = [_weights(f"{i}.{p}", s) for i, p, s in
                  [(0, "weight", (512, 784)), (0, "bias", (512,)), (2, "weight", (512, 512)),
                   (2, "bias", (512,)), (4, "weight", (10, 512)), (4, "bias", (10,))]]

            def step():
                return _numpy_mlp(x_np, ws)
        else:
            with lib.no_grad():
                model = builder(lib)
                model.eval()
                _set_weights(lib, model)
            x = lib.from_numpy(x_np)

            def step():
                with lib.no_grad():
                    return model(x)
        out = step()
        checksum = float(np.asarray(out.numpy() if hasattr(out, "numpy") else out,
                                    dtype=np.float64).sum())
        # Warm up for a fifth of the time, then time single calls for the rest.
        deadline = time.perf_counter() + seconds / 5
        while time.perf_counter() < deadline:
            step()
        times = []
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline or len(times) < 5:
            start = time.perf_counter()
            step()
            times.append(time.perf_counter() - start)
        results[name] = {"median": statistics.median(times), "calls": len(times),
                         "checksum": checksum}
    print(json.dumps(results))


# ---- the driver --------------------------------------------------------------------------

def run_worker(lib, threads, names, seconds):
    env = dict(os.environ)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", lib, "--threads",
           str(threads), "--seconds", str(seconds), "--cases", json.dumps(names)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{lib} worker failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt_time(s):
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.0f} µs"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.5,
                        help="timed seconds per case in each worker run")
    parser.add_argument("--quick", action="store_true", help="one short round (smoke run)")
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--cases", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.threads, json.loads(args.cases), args.seconds)
    if args.quick:
        args.rounds, args.seconds = 1, 0.3
    names = [c[0] for c in CASES if args.k in c[0]]
    libs = [lib for lib in LIBS if lib != "torch" or _has_torch()]
    samples = {}  # (case, lib, threads) -> [medians]
    checks = {}
    for r in range(args.rounds):
        order = libs[r % len(libs):] + libs[:r % len(libs)]
        for threads in (1, 2):
            for lib in order:
                for name, res in run_worker(lib, threads, names, args.seconds).items():
                    samples.setdefault((name, lib, threads), []).append(res["median"])
                    checks.setdefault(name, {})[lib] = res["checksum"]
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    lines = ["# Model benchmarks (benchmarks/models.py)", "",
             f"{args.rounds} rounds; each cell is the median over rounds of a worker's median "
             "forward time; each library in its own processes, interleaved.", "",
             "| model | threads | pith | PyTorch | NumPy | pith / PyTorch | pith / NumPy |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name in names:
        for threads in (1, 2):
            cell = {lib: statistics.median(samples[(name, lib, threads)])
                    for lib in libs if (name, lib, threads) in samples}
            p = cell.get("pith")
            row = [name, str(threads)] + [fmt_time(cell[lib]) if lib in cell else "—"
                                          for lib in ("pith", "torch", "numpy")]
            row += [f"{p / cell['torch']:.2f}" if "torch" in cell else "—",
                    f"{p / cell['numpy']:.2f}" if "numpy" in cell else "—"]
            lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Output checksums (the same weights and inputs in every library):", ""]
    for name in names:
        lines.append(f"- {name}: " + ", ".join(f"{lib} {v:.6g}"
                                               for lib, v in sorted(checks[name].items())))
    lines += ["", "## Environment", "",
              f"- machine: {platform.machine()}, {os.cpu_count()} CPUs, "
              f"load average {os.getloadavg()[0]:.2f} at the end",
              f"- Python {platform.python_version()}"]
    for var in ENV_SHOWN:
        lines.append(f"- {var}={os.environ.get(var, '(unset)')}")
    text = "\n".join(lines) + "\n"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "models_results.md"), "w") as f:
        f.write(text)
    print(text)


def _has_torch():
    try:
        import importlib.util
        return importlib.util.find_spec("torch") is not None
    except ImportError:
        return False


if __name__ == "__main__":
    sys.exit(main())
