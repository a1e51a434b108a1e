"""What `import pith` costs a process: time and max RSS of fresh interpreters (not a test).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=build/pypath \\
        python benchmarks/import_time.py [--rounds N] [--skip numpy|torch]
        [--no-bytecode-cache] [--baseline PYTHONPATH] [--json PATH]

Each round starts one fresh process per case, in an order that rotates between rounds, so
that the cases share whatever else the machine is doing:

  - bare: `python -c pass`, the interpreter's own start-up;
  - pith: `python -c "import pith"`;
  - numpy and torch: `python -c "import numpy"` / `"import torch"`, when installed;
  - pith MLP: import pith, build the MLP 784-512-512-10, pith.compile it and print the
    first element of its first compiled result (batch 1, under pith.no_grad): the whole
    life of a short script that compiles a model;
  - with --baseline PATH, the two pith cases again with PYTHONPATH=PATH (say, a build of
    the commit before a change), so that before and after share the same rounds.

A process's wall time runs from starting it to reaping it, as the driver sees it; its CPU
time (user + system, from wait4) is the figure a busy machine distorts less. Its max RSS
comes from a second process per case and round, started by `/usr/bin/time -f %M`: a child
forked from this (larger) driver would report the driver's RSS at the fork as its maximum.
The table gives, per case, the medians over rounds and their ratios to bare python's, and
the median max RSS over bare python's.

The children read and write compiled bytecode in a cache of their own (PYTHONPYCACHEPREFIX,
a fresh temporary directory filled by an untimed first run of each case), as an installed
pith has its .pyc files: PYTHONDONTWRITEBYTECODE, which a source checkout may set, would
otherwise make every process compile pith's sources again. --no-bytecode-cache measures
that case instead. docs/python.md ("Import cost") has the figures and what is imported
lazily.
"""
import argparse
import importlib.util
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

MLP = """\
import pith
nn = pith.nn
model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                      nn.Linear(512, 10)).eval()
compiled = pith.compile(model)
with pith.no_grad():
    y = compiled(pith.randn(1, 784))
print(y[0, 0].item())
"""

# (name, code, the module it needs or None, whether it runs pith)
CASES = [("bare python", "pass", None, False), ("import pith", "import pith", None, True),
         ("import numpy", "import numpy", "numpy", False),
         ("import torch", "import torch", "torch", False),
         ("pith MLP: import, compile, first result", MLP, None, True)]


def run_timed(code, env):
    """(wall seconds, user + system CPU seconds) of a fresh `python -c code`."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"python -c {code!r} exited with {proc.returncode}")
    return elapsed, usage.ru_utime + usage.ru_stime


def run_max_rss(code, env):
    """The max RSS, in KiB, of a fresh `python -c code`."""
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, sys.executable, "-c",
                        code], stdout=subprocess.DEVNULL, env=env, check=True)
        return int(out.read().split()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="run the children with PYTHONDONTWRITEBYTECODE=1 and no cache")
    parser.add_argument("--skip", action="append", default=[], choices=("numpy", "torch"),
                        help="leave out `import numpy` or `import torch` (repeatable)")
    parser.add_argument("--baseline", metavar="PYTHONPATH",
                        help="also run the pith cases with this PYTHONPATH (another build's "
                             "pypath), alternating with the others: a before/after in one run")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="import_time_pycache_") as pycache:
        env = dict(os.environ)
        if args.no_bytecode_cache:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = pycache
        cases = []  # (name, code, env)
        for name, code, module, runs_pith in CASES:
            if module is not None and (module in args.skip
                                       or importlib.util.find_spec(module) is None):
                continue
            cases.append((name, code, env))
            if runs_pith and args.baseline:
                cases.append((f"{name} (baseline)", code, dict(env, PYTHONPATH=args.baseline)))
        for name, code, case_env in cases:  # untimed: fills the bytecode and page caches
            run_timed(code, case_env)
        times = {name: [] for name, _, _ in cases}
        rss = {name: [] for name, _, _ in cases}
        cpu = {name: [] for name, _, _ in cases}
        for r in range(args.rounds):
            shift = r % len(cases)
            for name, code, case_env in cases[shift:] + cases[:shift]:
                elapsed, cpu_seconds = run_timed(code, case_env)
                times[name].append(elapsed)
                cpu[name].append(cpu_seconds)
                rss[name].append(run_max_rss(code, case_env))
    shown = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in
                     ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "PYTHONPATH") if k in os.environ)
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {args.rounds} rounds, "
          f"{'no bytecode cache' if args.no_bytecode_cache else 'bytecode cached'}; "
          f"env: {shown or '(none of OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE, PYTHONPATH)'}"
          + (f"; baseline PYTHONPATH={shlex.quote(args.baseline)}" if args.baseline else "")
          + "\n")
    bare_time = statistics.median(times["bare python"])
    bare_cpu = statistics.median(cpu["bare python"])
    bare_rss = statistics.median(rss["bare python"])
    print("| process | wall time | / bare python | CPU time | / bare python | max RSS | "
          "over bare python |")
    print("|---|---|---|---|---|---|---|")
    figures = {}
    for name, _, _ in cases:
        t, c = statistics.median(times[name]), statistics.median(cpu[name])
        m = statistics.median(rss[name])
        figures[name] = {"median_s": t, "ratio": t / bare_time, "median_cpu_s": c,
                         "cpu_ratio": c / bare_cpu, "max_rss_kib": m,
                         "extra_rss_kib": m - bare_rss}
        print(f"| {name} | {t * 1e3:.1f} ms | {t / bare_time:.2f}x | {c * 1e3:.0f} ms | "
              f"{c / bare_cpu:.2f}x | {m / 1024:.1f} MiB | {(m - bare_rss) / 1024:+.1f} MiB |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "figures": figures}, f, indent=1)


if __name__ == "__main__":
    main()
