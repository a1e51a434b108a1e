"""The vectorised math functions of pith against PyTorch (not a test).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/vecmath.py \\
        [--threads 1 2] [--repeats 21] [--dtype float32] [--out benchmarks/vecmath_results.md]

Each op of Note [Vectorised math functions] (kernels/vecmath.h) on a (4, 64, 768) tensor,
pith and PyTorch each in its own worker process (torch brings its own OpenMP runtime, and two
spinning pools on two cores would measure nothing), driven by this script over pipes: the
workers take turns within every repeat, with a pause between turns (50 ms) so that the idle
pool has stopped spinning: torch's libgomp spins 300000 times after each region, several ms
on this machine, and pith's 2-thread regions run within that window measure the contention
(5 ms pauses made pith's `x + y` look 6x slower than when run alone). The share of CPU time
the hypervisor took (steal, from /proc/stat) during the run goes into the results: a run
with much steal distorts the 2-thread figures of both libraries. Before every timed loop a
worker runs the statement a tenth as many times untimed, so that its threads (and the vCPUs
they run on) are awake when the timing starts (docs/building.md, "Benchmarks"). Each figure is the median over the repeats of a timed loop of `number`
calls. Writes a markdown table (the environment included) to --out and prints it.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

SHAPE = (4, 64, 768)

# name -> (statement, which input): x is randn, xp = |x| + 0.1 (log, sqrt, pow's base),
# y = randn / 4 (pow's exponent tensor); w and bias are layer_norm's, over the last dim.
OPS = {
    "exp": ("T.exp(x)", None),
    "log": ("T.log(xp)", None),
    "log1p": ("T.log1p(xp)", None),
    "tanh": ("T.tanh(x)", None),
    "sigmoid": ("T.sigmoid(x)", None),
    "silu": ("F.silu(x)", None),
    "gelu": ("F.gelu(x)", None),
    "gelu (tanh)": ("F.gelu(x, approximate='tanh')", None),
    "erf": ("T.erf(x)", None),
    "sin": ("T.sin(x)", None),
    "cos": ("T.cos(x)", None),
    "sqrt": ("T.sqrt(xp)", None),
    "rsqrt": ("T.rsqrt(xp)", None),
    "pow(x, 3.0)": ("x.pow(3.0)", None),
    "x ** 2": ("x ** 2", None),
    "pow(x, 2.5)": ("xp.pow(2.5)", None),
    "pow(x, y)": ("T.pow(xp, y)", None),
    "sum": ("x.sum()", None),
    "softmax": ("F.softmax(x, dim=-1)", None),
    "layer_norm": ("F.layer_norm(x, x.shape[-1:], w, bias)", None),
    "x + y (reference)": ("x + y", None),
    "x * y (reference)": ("x * y", None),
}

WORKER = r"""
import json, sys, timeit
lib, threads, dtype = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if lib == "pith":
    import pith as T
    import pith.nn.functional as F
else:
    import torch as T
    import torch.nn.functional as F
    T.set_grad_enabled(False)
T.set_num_threads(threads)
import numpy as np
rng = np.random.default_rng(0)
shape = tuple(json.loads(sys.argv[4]))
a = rng.standard_normal(shape).astype(dtype)
b = (rng.standard_normal(shape) / 4).astype(dtype)
x = T.from_numpy(a)
y = T.from_numpy(b)
xp = T.abs(x) + 0.1
w = T.from_numpy(rng.standard_normal(shape[-1:]).astype(dtype))
bias = T.from_numpy(rng.standard_normal(shape[-1:]).astype(dtype))
env = {"T": T, "F": F, "x": x, "y": y, "xp": xp, "w": w, "bias": bias}
info = {"threads": T.get_num_threads(), "version": T.__version__}
if lib == "pith":
    info["cpu_capability"] = T.backends.cpu.get_cpu_capability()
else:
    info["cpu_capability"] = T.backends.cpu.get_cpu_capability()
print(json.dumps(info), flush=True)
timers = {}
for line in sys.stdin:
    stmt, number = json.loads(line)
    if stmt not in timers:
        timers[stmt] = timeit.Timer(stmt, globals=env)
        timers[stmt].timeit(max(1, number // 4))  # warm-up
        result = eval(stmt, env)
        env["_last"] = result
    timers[stmt].timeit(max(1, number // 10))  # wakes this worker's threads and vCPUs
    seconds = timers[stmt].timeit(number) / number
    checksum = float(eval(stmt, env).double().sum())
    print(json.dumps([seconds, checksum]), flush=True)
"""


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--number", type=int, default=200,
                        help="calls per timed loop (docs/building.md: at least several ms)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--pause", type=float, default=0.05,
                        help="seconds between the workers' turns")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "vecmath_results.md"))
    return parser.parse_args()


class Worker:
    def __init__(self, lib, threads, dtype):
        env = dict(os.environ)
        for var in ("OMP_NUM_THREADS", "PITH_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "MKL_NUM_THREADS"):
            env[var] = str(threads)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, lib, str(threads), dtype, json.dumps(SHAPE)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.info = json.loads(self.proc.stdout.readline())

    def run(self, stmt, number):
        self.proc.stdin.write(json.dumps([stmt, number]) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def measure(threads, args):
    workers = {lib: Worker(lib, threads, args.dtype) for lib in ("pith", "torch")}
    rows = {}
    for name, (stmt, _) in OPS.items():
        samples = {lib: [] for lib in workers}
        sums = {}
        order = list(workers)
        for r in range(args.repeats):
            for lib in order[r % 2:] + order[:r % 2]:
                seconds, checksum = workers[lib].run(stmt, args.number)
                samples[lib].append(seconds)
                sums[lib] = checksum
                time.sleep(args.pause)
        scale = max(abs(sums["torch"]), 1.0)
        if abs(sums["pith"] - sums["torch"]) > 1e-3 * scale:
            raise SystemExit(f"{name}: the results differ (sums {sums['pith']} and "
                             f"{sums['torch']})")
        rows[name] = {lib: statistics.median(s) for lib, s in samples.items()}
        print(f"threads {threads} {name:18s} pith {rows[name]['pith'] * 1e6:8.1f} us  "
              f"torch {rows[name]['torch'] * 1e6:8.1f} us  "
              f"ratio {rows[name]['pith'] / rows[name]['torch']:.2f}", flush=True)
    infos = {lib: w.info for lib, w in workers.items()}
    for w in workers.values():
        w.close()
    return rows, infos


def cpu_times():
    """(steal, total) jiffies over all CPUs, from /proc/stat (zeros where it is missing)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def git_head():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=os.path.dirname(os.path.abspath(__file__))
                              ).stdout.strip()
    except OSError:
        return "?"


def main():
    args = parse_args()
    steal0, total0 = cpu_times()
    results = {t: measure(t, args) for t in args.threads}
    steal1, total1 = cpu_times()
    steal = (steal1 - steal0) / (total1 - total0) if total1 > total0 else 0.0
    lines = ["# pith's vectorised math functions against PyTorch", "",
             "Produced by `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python "
             "benchmarks/vecmath.py`. One (4, 64, 768) " + args.dtype + " tensor per op; each "
             "library in its own worker process, the two taking turns within every repeat; "
             f"medians over {args.repeats} repeats of {args.number} calls. Ratios divide pith's "
             "median by PyTorch's (target: at most 1.0). The machine is shared and noisy: "
             "compare ratios from one run.", ""]
    first = next(iter(results.values()))[1]
    lines += [f"- Date: {datetime.datetime.now().isoformat(timespec='seconds')}; git {git_head()}",
              f"- Machine: {platform.processor() or platform.machine()}; {os.cpu_count()} "
              f"logical CPUs; load average at the end {', '.join(f'{v:.2f}' for v in os.getloadavg())}; "
              f"steal during the run {steal:.0%} of CPU time",
              f"- pith {first['pith']['version']} (CPU capability "
              f"{first['pith']['cpu_capability']}), PyTorch {first['torch']['version']} "
              f"({first['torch']['cpu_capability']}); Python {platform.python_version()}",
              "- Environment: " + ", ".join(
                  f"`{v}={os.environ[v]}`" if v in os.environ else f"`{v}` unset"
                  for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "PITH_CPU_CAPABILITY",
                            "PYTHONPATH")) + "; each worker gets `OMP_NUM_THREADS`, "
              "`PITH_NUM_THREADS`, `OPENBLAS_NUM_THREADS` and `MKL_NUM_THREADS` = its thread "
              "count", ""]
    header = "| op |" + "".join(f" pith, {t} thr | PyTorch, {t} thr | ratio, {t} thr |"
                                for t in results)
    lines += [header, "|" + " --- |" * (1 + 3 * len(results))]
    for name in OPS:
        cells = []
        for t, (rows, _) in results.items():
            r = rows[name]
            cells += [f"{r['pith'] * 1e6:.1f} µs", f"{r['torch'] * 1e6:.1f} µs",
                      f"{r['pith'] / r['torch']:.2f}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
