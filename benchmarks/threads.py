"""pith under each OpenMP wait policy and each OpenBLAS build (not a test).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=build/pypath \\
        python benchmarks/threads.py [--rounds R] [--seconds S] [-k TEXT] [--out DIR]

libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, when it loads, so every variant runs
in worker processes of its own, started with that environment: how long an idle OpenMP
worker spins before it sleeps (GOMP_SPINCOUNT=300000 is libgomp's own default, about 3 ms;
OMP_WAIT_POLICY=PASSIVE sleeps at once), crossed with the OpenBLAS build (the OpenMP build
that pith links, or Debian's pthread build through LD_LIBRARY_PATH, when
libopenblas0-pthread is installed). The driver interleaves the variants round by round,
in an order that rotates between rounds; each cell is the median over rounds of a worker's
median time per call. The cases are models.py's GPT (llama2.c-sized) and MLP, a chain of
elementwise ops (back-to-back parallel regions, where spinning pays), and the MLP with a
NumPy matmul after each forward in the same process (NumPy's own BLAS threads then need
the cores that pith's idle workers spin on), and bursts of ops after an idle pause (where a
short spin lets both threads fall asleep and wake each other late, call after call, on a
virtual machine). Writes DIR/threads_results.md.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402  (the model builders and weights)

PTHREAD_DIR = "/usr/lib/x86_64-linux-gnu/openblas-pthread"
POLICIES = [  # (label, environment)
    ("GOMP_SPINCOUNT=300000 (libgomp's default)", {"GOMP_SPINCOUNT": "300000"}),
    ("GOMP_SPINCOUNT=30000", {"GOMP_SPINCOUNT": "30000"}),
    ("GOMP_SPINCOUNT=10000", {"GOMP_SPINCOUNT": "10000"}),
    ("GOMP_SPINCOUNT=3000", {"GOMP_SPINCOUNT": "3000"}),
    ("GOMP_SPINCOUNT=1000", {"GOMP_SPINCOUNT": "1000"}),
    ("OMP_WAIT_POLICY=PASSIVE", {"OMP_WAIT_POLICY": "PASSIVE"}),
]
CASES = ["GPT 4x256, batch 4x64", "MLP 784-512-512-10, batch 32",
         "MLP 784-512-512-10, batch 1", "elementwise chain, 16 ops on 256K floats",
         "MLP batch 32, then NumPy 256x256 @ 256x256",
         "layer_norm (4, 256, 256), 10 calls after a 20 ms pause",
         "x + y (4, 64, 768), 200 calls after a 50 ms pause"]


def worker(threads, case_names, seconds):
    for var in ("PITH_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    import pith
    pith.set_num_threads(threads)
    mlp = {c[0]: c for c in models.CASES}
    results = {}
    for name in case_names:
        if name.startswith(("GPT", "MLP 784")):
            _, builder, shape, kind = mlp[name]
            with pith.no_grad():
                model = builder(pith)
                model.eval()
                models._set_weights(pith, model)
            x = pith.from_numpy(models._input(shape, kind))

            def step():
                return model(x)
        elif name.startswith("elementwise"):
            a = pith.from_numpy(np.random.default_rng(0).standard_normal(1 << 18)
                                .astype(np.float32))

            def step():
                y = a
                for _ in range(4):
                    y = (y * 0.5 + a).relu() - a
                return y
        elif name.startswith("x + y"):
            xs, ys = pith.randn(4, 64, 768), pith.randn(4, 64, 768)

            def step():
                time.sleep(0.05)
                start = time.perf_counter()
                for _ in range(200):
                    xs + ys
                return (time.perf_counter() - start) / 20  # per 10 calls, as above
        elif name.startswith("layer_norm"):
            # A burst of ops after the process was idle (Python work, I/O): the workers
            # have slept, and on a virtual machine their vCPUs may have been given away.
            # The step times its burst itself, without the pause.
            xs = pith.randn(4, 256, 256)
            w, b = pith.randn(256), pith.randn(256)

            def step():
                time.sleep(0.02)
                start = time.perf_counter()
                for _ in range(10):
                    pith.nn.functional.layer_norm(xs, (256,), w, b)
                return time.perf_counter() - start
        else:
            _, builder, shape, kind = mlp["MLP 784-512-512-10, batch 32"]
            with pith.no_grad():
                model = builder(pith)
                model.eval()
                models._set_weights(pith, model)
            x = pith.from_numpy(models._input(shape, kind))
            m = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)

            def step():
                return model(x), m @ m
        with pith.no_grad():
            deadline = time.perf_counter() + seconds / 5
            while time.perf_counter() < deadline:
                step()
            times = []
            deadline = time.perf_counter() + seconds
            while time.perf_counter() < deadline or len(times) < 5:
                start = time.perf_counter()
                own = step()
                times.append(own if isinstance(own, float) else time.perf_counter() - start)
        results[name] = statistics.median(times)
    info = pith.__config__.blas_info() if hasattr(pith, "__config__") else {}
    print(json.dumps({"times": results, "blas": info.get("threading", "?")}))


def run_worker(env_extra, threads, names, seconds):
    env = dict(os.environ)
    for var in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "LD_LIBRARY_PATH"):
        env.pop(var, None)
    env.update(env_extra)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--threads", str(threads),
           "--seconds", str(seconds), "--cases", json.dumps(names)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"worker {env_extra} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt_time(s):
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.0f} µs"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="timed seconds per case in each worker run")
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument("--builds", default="openmp,pthread",
                        help="the OpenBLAS builds to run, of openmp,pthread")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=2, help=argparse.SUPPRESS)
    parser.add_argument("--cases", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.threads, json.loads(args.cases), args.seconds)
    names = [c for c in CASES if args.k in c]
    wanted = args.builds.split(",")
    builds = [("openmp", {})] if "openmp" in wanted else []
    if "pthread" in wanted and os.path.exists(os.path.join(PTHREAD_DIR, "libopenblas.so.0")):
        builds.append(("pthread", {"LD_LIBRARY_PATH": PTHREAD_DIR}))
    variants = [(build, label, 2, {**benv, **penv}) for build, benv in builds
                for label, penv in POLICIES]
    variants += [(build, "(1 thread)", 1, benv) for build, benv in builds]
    samples, loaded = {}, {}
    for r in range(args.rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for build, label, threads, env in order:
            out = run_worker(env, threads, names, args.seconds)
            loaded[build] = out["blas"]
            for name, t in out["times"].items():
                samples.setdefault((name, build, label), []).append(t)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    labels = [label for label, _ in POLICIES] + ["(1 thread)"]
    lines = ["# OpenMP wait policy and OpenBLAS build (benchmarks/threads.py)", "",
             f"Produced by `python benchmarks/threads.py --rounds {args.rounds} --seconds "
             f"{args.seconds}" + (f" -k '{args.k}'" if args.k else "") +
             (f" --builds {args.builds}" if args.builds != "openmp,pthread" else "") +
             "`. pith only, "
             "2 threads unless the row says 1; each cell is the median over rounds of a "
             "worker's median time per call.", ""]
    for build, _ in builds:
        lines += [f"## OpenBLAS {build} build (pith.__config__ reports: {loaded[build]})", "",
                  "| setting | " + " | ".join(names) + " |",
                  "| --- |" + " --- |" * len(names)]
        for label in labels:
            cells = [fmt_time(statistics.median(samples[(n, build, label)])) for n in names]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Environment", "",
              f"- machine: {platform.machine()}, {os.cpu_count()} CPUs, load average "
              f"{os.getloadavg()[0]:.2f} at the end; Python {platform.python_version()}"]
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "PYTHONPATH"):
        lines.append(f"- {var}={os.environ.get(var, '(unset)')}")
    text = "\n".join(lines) + "\n"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "threads_results.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
