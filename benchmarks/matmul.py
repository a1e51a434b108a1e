"""Matmul benchmarks: pith against NumPy's own OpenBLAS and PyTorch, at 1 and 2 threads.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=build/pypath \\
        python benchmarks/matmul.py [--rounds R] [--quick] [-k TEXT] [--out DIR]

Every shape that the BLAS paths of pith take (Note [Vector products], kernels/linalg_gemm.c):
1, 32 and 256 rows, against a row-major matrix and against transposed weights (F.linear's
layout), matrix-vector, vector-vector, batched products (stacked and separate), float64, and
addmm's alpha/beta form. Each (library, thread count) pair runs in a worker process of its
own, started once and kept warm, and the driver interleaves them sample by sample: a sample
is one worker timing `number` back-to-back calls of one case (number chosen so that a sample
takes about --sample seconds), and the next worker starts only --pause seconds after the
previous one ends, so that the threads a library leaves spinning (OpenBLAS's pthread pool
spins for up to ~0.1 s) do not slow the next one; before each sample the worker makes a tenth
as many calls untimed, so that its threads and their vCPUs are awake (docs/building.md,
"Benchmarks"). The order of the libraries rotates from
round to round. Each cell is the median over rounds.

A worker sets the thread count before importing its library (PITH_NUM_THREADS,
OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS) and afterwards (pith and torch
set_num_threads; NumPy's BLAS with threadpoolctl when it is installed), and reports the
thread counts that each library says it uses, which go into the results with the
environment. Every worker's result of every case is compared with NumPy's float64 product.
Writes DIR/matmul_results.md (default: benchmarks/).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import timeit

import numpy as np

LIBS = ("pith", "numpy", "torch")
ENV_SHOWN = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
             "LD_LIBRARY_PATH", "PYTHONPATH")


# ---- the cases ---------------------------------------------------------------------------
# (name, operand shapes, float dtype, expression). The expression is written once for the
# three libraries: `lib` is pith or torch (with `F` its nn.functional), or a NumPy shim
# below whose linear/addmm/matmul are NumPy's own expressions of the same product.
# `T(x)` is a transposed view of a matrix (x.t() / x.T), so that the weights of F.linear
# stay [out, in]; `S(x)` swaps the last two dims (x.transpose(-2, -1) / np.swapaxes).

def _cases():
    cases = []
    for rows in (1, 32, 256):
        cases.append((f"F.linear({rows}x784, 512x784 weight)", [(rows, 784), (512, 784)],
                      "float32", "F.linear(x0, x1)"))
    cases.append(("F.linear(1x784, 512x784 weight, bias)", [(1, 784), (512, 784), (512,)],
                  "float32", "F.linear(x0, x1, x2)"))
    for rows in (1, 32, 256):
        cases.append((f"{rows}x512 @ 512x512", [(rows, 512), (512, 512)], "float32",
                      "x0 @ x1"))
    cases += [
        ("512x784 @ 784 (matrix-vector)", [(512, 784), (784,)], "float32", "x0 @ x1"),
        ("784 @ 784x512 (vector-matrix)", [(784,), (784, 512)], "float32", "x0 @ x1"),
        ("T(784x512) @ 784 (transposed matrix)", [(784, 512), (784,)], "float32",
         "T(x0) @ x1"),
        ("4096 @ 4096 (dot)", [(4096,), (4096,)], "float32", "x0 @ x1"),
        ("x[:, ::2] @ W.T, 1x1568 strided row", [(1, 1568), (512, 784)], "float32",
         "x0[:, ::2] @ T(x1)"),
        ("addmm(b, 1x784, T(512x784), beta=0.5, alpha=2)", [(512,), (1, 784), (512, 784)],
         "float32", "lib.addmm(x0, x1, T(x2), beta=0.5, alpha=2)"),
        ("F.linear(4x64x256, 768x256 weight) (stacked rows)", [(4, 64, 256), (768, 256)],
         "float32", "F.linear(x0, x1)"),
        ("bmm 8x(1x256 @ 256x256) (batched vector-matrix)", [(8, 1, 256), (8, 256, 256)],
         "float32", "x0 @ x1"),
        ("bmm 32x(64x32 @ 32x64) (attention scores)", [(32, 64, 32), (32, 32, 64)],
         "float32", "x0 @ x1"),
        ("q @ k^T, 4x8x64x32 (attention, 4-D)", [(4, 8, 64, 32), (4, 8, 64, 32)], "float32",
         "x0 @ S(x1)"),
        ("bmm 16x(1x64 @ 64x64) (tiny batched)", [(16, 1, 64), (16, 64, 64)], "float32",
         "x0 @ x1"),
        ("F.linear(1x784, 512x784 weight) float64", [(1, 784), (512, 784)], "float64",
         "F.linear(x0, x1)"),
        ("32x512 @ 512x512 float64", [(32, 512), (512, 512)], "float64", "x0 @ x1"),
    ]
    return cases


CASES = _cases()


class _NumpyLib:
    """NumPy spelled as the torch-like expressions above (the usual NumPy way of each)."""
    @staticmethod
    def addmm(b, x, w, beta=1, alpha=1):
        return beta * b + alpha * (x @ w)


class _NumpyF:
    @staticmethod
    def linear(x, w, b=None):
        return x @ w.T if b is None else x @ w.T + b


def _operands(shapes, dtype):
    rng = np.random.default_rng(len(shapes) * 1000 + sum(map(sum, shapes)))
    return [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]


def _reference(expr, arrays):
    scope = {"lib": _NumpyLib, "F": _NumpyF, "T": lambda x: x.T,
             "S": lambda x: np.swapaxes(x, -2, -1)}
    scope.update({f"x{i}": a.astype(np.float64) for i, a in enumerate(arrays)})
    return eval(expr, scope)  # noqa: S307 (our own expressions)


# ---- the worker --------------------------------------------------------------------------

def _thread_report(lib_name, lib):
    if lib_name == "numpy":
        try:
            from threadpoolctl import threadpool_info
            return "threadpoolctl: " + "; ".join(
                f"{p.get('internal_api')} {p.get('version')} num_threads={p.get('num_threads')}"
                for p in threadpool_info())
        except ImportError:
            return "threadpoolctl not installed (OPENBLAS_NUM_THREADS set before import)"
    if lib_name == "torch":
        return f"torch.get_num_threads()={lib.get_num_threads()}"
    report = f"pith.get_num_threads()={lib.get_num_threads()}"
    config = getattr(lib, "__config__", None)
    if config is not None and hasattr(config, "blas_info"):
        info = config.blas_info()
        report += (f"; BLAS {info['threading']} build, own thread count "
                   f"{info['num_threads']}: {info['config']}")
    return report


def worker(lib_name, threads):
    for var in ("PITH_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    if lib_name == "numpy":
        lib, F, T = _NumpyLib, _NumpyF, (lambda x: x.T)
        S = (lambda x: np.swapaxes(x, -2, -1))
        convert = np.ascontiguousarray
        try:
            from threadpoolctl import threadpool_limits
            threadpool_limits(threads)
        except ImportError:
            pass
    else:
        lib = __import__(lib_name)
        import importlib
        F = importlib.import_module(f"{lib_name}.nn.functional")
        lib.set_num_threads(threads)
        if lib_name == "torch":
            lib.set_grad_enabled(False)
        T, S = (lambda x: x.t()), (lambda x: x.transpose(-2, -1))
        convert = lib.from_numpy
    print(json.dumps({"threads": _thread_report(lib_name, lib)}), flush=True)
    timers = {}
    for line in sys.stdin:
        request = json.loads(line)
        name = request["case"]
        if name not in timers:
            _, shapes, dtype, expr = next(c for c in CASES if c[0] == name)
            scope = {"lib": lib, "F": F, "T": T, "S": S}
            scope.update({f"x{i}": convert(a) for i, a in
                          enumerate(_operands(shapes, dtype))})
            out = eval(expr, scope)  # noqa: S307 (our own expressions)
            values = np.asarray(out.numpy() if hasattr(out, "numpy") else out,
                                dtype=np.float64)
            timer = timeit.Timer(expr, globals=scope)
            number, _ = timer.autorange()  # at least 0.2 s: also the warm-up
            number = max(1, int(number * request["sample"] / 0.2))
            timers[name] = (timer, number)
            print(json.dumps({"values": values.ravel().tolist(), "shape": values.shape}),
                  flush=True)
            continue
        timer, number = timers[name]
        timer.timeit(max(1, number // 10))  # wakes this worker's threads and vCPUs first
        print(json.dumps({"seconds": timer.timeit(number) / number}), flush=True)


# ---- the driver --------------------------------------------------------------------------

class Worker:
    """A warm worker process of `script` (this file, or another driver that speaks the same
    protocol: blas_peers.py) for one library and thread count."""

    def __init__(self, lib, threads, script=__file__):
        cmd = [sys.executable, os.path.abspath(script), "--worker", lib, "--threads",
               str(threads)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.threads_report = self._read()["threads"]

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.proc.args} died")
        return json.loads(line)

    def ask(self, request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        return self._read()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def fmt_time(s):
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} µs"


def driver_arguments(doc, rounds):
    """The options of this driver and of the ones that reuse its protocol (blas_peers.py)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--sample", type=float, default=0.05,
                        help="seconds of calls per sample")
    parser.add_argument("--pause", type=float, default=0.15,
                        help="idle seconds before each sample")
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--quick", action="store_true", help="3 short rounds (smoke run)")
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    return parser


def parse_driver_arguments(parser):
    """(args, thread counts); --quick shortens the rounds."""
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.sample, args.pause = 3, 0.02, 0.05
    return args, [int(t) for t in args.threads.split(",")]


def collect_samples(args, case_names, thread_counts, libs, workers):
    """{(case, lib, threads): [seconds per call]}: round after round, every case at every
    thread count, the libraries' order rotating, a pause before each sample."""
    samples = {}
    for r in range(args.rounds):
        for name in case_names:
            for t in thread_counts:
                for lib in libs[r % len(libs):] + libs[:r % len(libs)]:
                    time.sleep(args.pause)
                    seconds = workers[(lib, t)].ask({"case": name})["seconds"]
                    samples.setdefault((name, lib, t), []).append(seconds)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    return samples


def main():
    parser = driver_arguments(__doc__, rounds=15)
    parser.add_argument("--libs", default=",".join(LIBS))
    args, thread_counts = parse_driver_arguments(parser)
    if args.worker:
        return worker(args.worker, thread_counts[0])
    cases = [c for c in CASES if args.k in c[0]]
    libs = [lib for lib in args.libs.split(",") if lib != "torch" or _has_torch()]
    workers = {(lib, t): Worker(lib, t) for t in thread_counts for lib in libs}
    for (lib, t), w in workers.items():  # check every result first (and warm up)
        for name, shapes, dtype, expr in cases:
            got = w.ask({"case": name, "sample": args.sample})
            want = _reference(expr, _operands(shapes, dtype))
            tol = 1e-4 if dtype == "float32" else 1e-10
            if got["shape"] != list(np.shape(want)) or not np.allclose(
                    np.reshape(got["values"], np.shape(want)), want, rtol=tol, atol=tol):
                raise SystemExit(f"{lib} ({t} threads) gives a wrong result for {name}")
    samples = collect_samples(args, [c[0] for c in cases], thread_counts, libs, workers)
    reports = {key: w.threads_report for key, w in workers.items()}
    for w in workers.values():
        w.close()
    write_results(args, cases, libs, thread_counts, samples, reports)


def write_results(args, cases, libs, thread_counts, samples, reports):
    lines = ["# Matmul benchmarks (benchmarks/matmul.py)", "",
             f"Produced by `python benchmarks/matmul.py --rounds {args.rounds} --sample "
             f"{args.sample} --pause {args.pause}`"
             + (f" -k '{args.k}'" if args.k else "") + ". Each cell is the median over "
             "rounds of the time per call (a sample times back-to-back calls); each library "
             "in its own worker processes, interleaved sample by sample. Target: pith at "
             "most 1.0x NumPy and 1.0x PyTorch.", "",
             "| case | threads | pith | NumPy | PyTorch | pith / NumPy | pith / PyTorch | "
             "met? |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, *_ in cases:
        for t in thread_counts:
            cell = {lib: statistics.median(samples[(name, lib, t)]) for lib in libs}
            ratios = {lib: cell["pith"] / cell[lib] for lib in libs if lib != "pith"}
            met = all(r <= 1.0 for r in ratios.values())
            lines.append("| " + " | ".join(
                [f"`{name}`", str(t)]
                + [fmt_time(cell[lib]) if lib in cell else "-" for lib in LIBS]
                + [f"{ratios[lib]:.2f}" if lib in ratios else "-" for lib in ("numpy", "torch")]
                + ["yes" if met else "**no**"]) + " |")
    lines += ["", "## Environment", "",
              f"- machine: {platform.machine()}, {os.cpu_count()} CPUs, load average "
              f"{os.getloadavg()[0]:.2f} at the end; Python {platform.python_version()}; "
              f"NumPy {np.__version__}"]
    for (lib, t), report in sorted(reports.items()):
        lines.append(f"- {lib}, {t} thread(s): {report}")
    for var in ENV_SHOWN:
        lines.append(f"- {var}={os.environ.get(var, '(unset)')}")
    text = "\n".join(lines) + "\n"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "matmul_results.md"), "w") as f:
        f.write(text)
    print(text)


def _has_torch():
    import importlib.util
    return importlib.util.find_spec("torch") is not None


if __name__ == "__main__":
    sys.exit(main())
