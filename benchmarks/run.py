"""Side-by-side benchmarks of pith, NumPy and PyTorch (not a test).

    python benchmarks/run.py [--threads N] [--quick] [--out DIR]

Measures every case for the three libraries in one process with the same thread count
(PITH_NUM_THREADS, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS, and
torch/pith.set_num_threads), interleaving the libraries repeat by repeat so that a noisy
machine slows them alike. Each figure is the median over many timeit-style repeats (a
compiled loop of `number` calls, garbage collector off). Writes DIR/results.md (default:
benchmarks/) with the table and the environment, and DIR/plot.png (matplotlib, imported only
here). pith comes from the installed package or PYTHONPATH; the environment is left as it
is (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE included) and printed in results.md.
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import timeit


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2, help="threads for every library")
    parser.add_argument("--quick", action="store_true", help="few repeats (a smoke run)")
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)),
                        help="directory for results.md and plot.png")
    parser.add_argument("--calls-only", action="store_true",
                        help="only the call-layer rows, into DIR/calls_results.md")
    return parser.parse_args()


ARGS = parse_args() if __name__ == "__main__" else None
if ARGS is not None:
    # Before any import that starts a thread pool: they read these once.
    for var in ("PITH_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "MKL_NUM_THREADS"):
        os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402

import pith  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:  # the table then has no PyTorch column
    torch = None

LIBS = ("pith", "numpy", "torch")
ENV_SHOWN = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
             "MKL_NUM_THREADS", "PITH_NUM_THREADS", "PYTHONPATH")


# ---- timing ------------------------------------------------------------------------------

def measure(stmts, number, repeats):
    """{lib: median seconds per call} of each library's statement. stmts maps a library to
    (statement, globals). The libraries take turns within each repeat."""
    timers = {lib: timeit.Timer(stmt, globals=env) for lib, (stmt, env) in stmts.items()}
    for timer in timers.values():  # warm-up: caches, allocator pools, lazy init
        timer.timeit(max(1, number // 10))
    samples = {lib: [] for lib in timers}
    order = list(timers)
    for r in range(repeats):
        for lib in order[r % len(order):] + order[:r % len(order)]:
            samples[lib].append(timers[lib].timeit(number) / number)
    return {lib: statistics.median(s) for lib, s in samples.items()}


def import_times(repeats):
    """{lib: median wall seconds of `python -c "import <lib>"`}, interleaved, plus the bare
    interpreter ('python')."""
    modules = {"python": "pass", "pith": "import pith", "numpy": "import numpy",
               "torch": "import torch"}
    if torch is None:
        del modules["torch"]
    samples = {name: [] for name in modules}
    # An installed package imports from cached bytecode (pip compiles it). With pith on
    # PYTHONPATH, or PYTHONDONTWRITEBYTECODE set (this machine sets it), every run would
    # compile the sources again, so the children may write their caches, and one untimed
    # run per module writes them first.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for code in modules.values():
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
    for _ in range(repeats):
        for name, code in modules.items():
            start = timeit.default_timer()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            samples[name].append(timeit.default_timer() - start)
    return {name: statistics.median(s) for name, s in samples.items()}


# ---- the cases ---------------------------------------------------------------------------

def pith_from_numpy(a):
    if hasattr(pith, "from_numpy"):
        return pith.from_numpy(np.ascontiguousarray(a))
    return pith.tensor(a.tolist(), dtype=getattr(pith, str(a.dtype)))


def torch_from_numpy(a):
    return torch.from_numpy(np.ascontiguousarray(a)).clone()


def check_close(name, got, want, rtol=1e-4, atol=1e-4):
    got = np.asarray(got.tolist() if not isinstance(got, np.ndarray) else got, dtype=np.float64)
    if not np.allclose(got, np.asarray(want, dtype=np.float64), rtol=rtol, atol=atol):
        raise SystemExit(f"benchmark {name}: results differ between libraries")


def per_lib(pith_stmt, numpy_stmt, torch_stmt, env):
    stmts = {"pith": (pith_stmt, env), "numpy": (numpy_stmt, env)}
    if torch is not None:
        stmts["torch"] = (torch_stmt, env)
    return stmts


def small_cases(rng, scale):
    a = rng.standard_normal(1).astype(np.float32)
    b = rng.standard_normal(1).astype(np.float32)
    x = rng.standard_normal((4, 4)).astype(np.float32)
    env = {"pa": pith_from_numpy(a), "pb": pith_from_numpy(b), "px": pith_from_numpy(x),
           "na": a, "nb": b, "nx": x}
    if torch is not None:
        env.update(ta=torch_from_numpy(a), tb=torch_from_numpy(b), tx=torch_from_numpy(x))
        check_close("a + b", env["pa"] + env["pb"], (env["ta"] + env["tb"]).numpy())
    check_close("a + b", env["pa"] + env["pb"], a + b)
    check_close("x.sum()", env["px"].sum(), x.sum(), rtol=1e-5)
    check_close("x[0]", env["px"][0], x[0])
    number, repeats = 2000, 60 * scale
    return [
        ("`a + b`, 1-element float32", per_lib("pa + pb", "na + nb", "ta + tb", env),
         number, repeats, ("pith/NumPy <= 1.0; pith/PyTorch <= 0.3",
                           lambda r: r["numpy"] <= 1.0 and r["torch"] <= 0.3)),
        ("`x.sum()`, 4x4 float32", per_lib("px.sum()", "nx.sum()", "tx.sum()", env),
         number, repeats, None),
        ("`x.view(16)`, 4x4 float32 (NumPy: `x.reshape(16)`)",
         per_lib("px.view(16)", "nx.reshape(16)", "tx.view(16)", env), number, repeats, None),
        ("`x[0]`, 4x4 float32", per_lib("px[0]", "nx[0]", "tx[0]", env), number, repeats,
         None),
    ]


def large_cases(rng, scale):
    n = 16 * 1024 * 1024
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.empty_like(a)
    env = {"pa": pith_from_numpy(a), "pb": pith_from_numpy(b), "na": a, "nb": b, "nc": c,
           "np": np}
    if torch is not None:
        env.update(ta=torch_from_numpy(a), tb=torch_from_numpy(b))
    sample = slice(0, n, 4099)
    check_close("x + y", (env["pa"] + env["pb"])[sample], (a + b)[sample])
    check_close("x * y", (env["pa"] * env["pb"])[sample], (a * b)[sample])
    target = ("pith/NumPy(out=) <= 1.15", lambda r: r["numpy"] <= 1.15)
    repeats = 30 * scale
    return [
        ("`x + y`, 16M float32, output allocated (NumPy: `np.add(a, b, out=c)`)",
         per_lib("pa + pb", "np.add(na, nb, out=nc)", "ta + tb", env), 1, repeats, target),
        ("`x * y`, 16M float32, output allocated (NumPy: `np.multiply(a, b, out=c)`)",
         per_lib("pa * pb", "np.multiply(na, nb, out=nc)", "ta * tb", env), 1, repeats, target),
        ("`x + y`, 16M float32, every library allocating (NumPy: `a + b`)",
         per_lib("pa + pb", "na + nb", "ta + tb", env), 1, repeats, None),
    ]


def matmul_case(rng, scale):
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 1024)).astype(np.float32)
    env = {"pa": pith_from_numpy(a), "pb": pith_from_numpy(b), "na": a, "nb": b}
    if torch is not None:
        env.update(ta=torch_from_numpy(a), tb=torch_from_numpy(b))
    want = a.astype(np.float64) @ b.astype(np.float64)
    check_close("matmul", (env["pa"] @ env["pb"])[:8], want[:8], rtol=1e-3, atol=1e-3)
    return [("`a @ b`, 1024x1024 float32",
             per_lib("pa @ pb", "na @ nb", "ta @ tb", env), 1, 20 * scale,
             ("PyTorch/pith throughput >= 0.95 (pith/PyTorch <= 1.053)",
              lambda r: r["torch"] <= 1 / 0.95))]


def build_pith_mlp(weights):
    """The MLP with pith.nn when it is there (weights loaded from NumPy), else with plain
    ops. Returns (callable, description)."""
    try:
        from pith import nn
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                              nn.Linear(512, 10))
        model.load_state_dict({k: pith_from_numpy(v) for k, v in weights.items()})
        model.eval()
        return model, "pith.nn.Sequential(Linear, ReLU, Linear, ReLU, Linear)"
    except (ImportError, AttributeError, TypeError) as e:
        params = {k: pith_from_numpy(v) for k, v in weights.items()}
        w = [params[f"{i}.weight"].t() for i in (0, 2, 4)]
        b = [params[f"{i}.bias"] for i in (0, 2, 4)]

        def forward(x):
            x = pith.relu(x @ w[0] + b[0])
            x = pith.relu(x @ w[1] + b[1])
            return x @ w[2] + b[2]
        return forward, f"plain pith ops (x @ w.T + b, relu); pith.nn failed: {e}"


def mlp_case(rng, scale):
    sizes = [(784, 512), (512, 512), (512, 10)]
    weights = {}
    for i, (fan_in, fan_out) in zip((0, 2, 4), sizes):
        bound = 1 / np.sqrt(fan_in)
        weights[f"{i}.weight"] = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        weights[f"{i}.bias"] = rng.uniform(-bound, bound, fan_out).astype(np.float32)
    x = rng.standard_normal((32, 784)).astype(np.float32)
    pith_model, how = build_pith_mlp(weights)
    w = [weights[f"{i}.weight"].T.copy() for i in (0, 2, 4)]
    bias = [weights[f"{i}.bias"] for i in (0, 2, 4)]

    def numpy_model(x):
        h = np.maximum(x @ w[0] + bias[0], 0)
        h = np.maximum(h @ w[1] + bias[1], 0)
        return h @ w[2] + bias[2]
    env = {"pm": pith_model, "px": pith_from_numpy(x), "nm": numpy_model, "nx": x}
    want = numpy_model(x)
    check_close("mlp", pith_model(env["px"]), want, rtol=1e-3, atol=1e-4)
    torch_stmt = None
    if torch is not None:
        tm = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                 torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                 torch.nn.Linear(512, 10))
        tm.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
        tm.eval()
        env.update(tm=tm, tx=torch_from_numpy(x), torch=torch)
        with torch.inference_mode():
            check_close("mlp", tm(env["tx"]).numpy(), want, rtol=1e-3, atol=1e-4)
        torch_stmt = "with torch.inference_mode(): tm(tx)"
    stmts = {"pith": ("pm(px)", env), "numpy": ("nm(nx)", env)}
    if torch_stmt:
        stmts["torch"] = (torch_stmt, env)
    return [(f"MLP forward, batch 32, 784-512-512-10 float32 ({how}; "
             "PyTorch: `torch.nn` in inference_mode)", stmts, 20, 40 * scale,
             ("pith/PyTorch <= 1.0", lambda r: r["torch"] <= 1.0))]


# ---- the call layer: keyword and overload forms against the positional form -------------

# (call, the positional form of the same op, PyTorch's same call). Tensors: a, b have one
# element, x, y are 4x8, all float32. See Note [One binder] (python_bindings/_C/binder.c).
CALLS = [
    ("a.add(b, alpha=2)", "a.add(b)", "ta.add(tb, alpha=2)"),
    ("pith.cat([x, x], dim=0)", "pith.cat([x, x])", "torch.cat([tx, tx], dim=0)"),
    ("pith.where(x > 0, x, 0.)", "pith.where(x > 0, x, y)", "torch.where(tx > 0, tx, 0.)"),
    ("pith.where(c, x, 0.)", "pith.where(c, x, y)", "torch.where(tc, tx, 0.)"),
    ("x.silu_()", "x.relu_()", "torch.nn.functional.silu(tx, inplace=True)"),
    ("x.maximum_(y)", "x.mul_(y)", "torch.maximum(tx, ty, out=tx)"),
    ("x.transpose(0, 1)", "x.transpose(0, 1)", "tx.transpose(0, 1)"),
    ("x.reshape(8, 4)", "x.reshape((8, 4))", "tx.reshape(8, 4)"),
    ("x.mean(dim=1, keepdim=False)", "x.mean(1)", "tx.mean(dim=1, keepdim=False)"),
    ("pith.ops.pith.add.Tensor(a, b)", "a.add(b)", "torch.ops.aten.add.Tensor(ta, tb)"),
]
CALL_TARGET = "call/positional <= 1.5; call/PyTorch <= 0.3"


def call_rows(rng, quick):
    a, b = (rng.standard_normal(1).astype(np.float32) for _ in range(2))
    x, y = (rng.standard_normal((4, 8)).astype(np.float32) for _ in range(2))
    env = {"pith": pith, "a": pith_from_numpy(a), "b": pith_from_numpy(b),
           "x": pith_from_numpy(x), "y": pith_from_numpy(y)}
    env["c"] = env["x"] > 0
    if torch is not None:
        env.update(torch=torch, ta=torch_from_numpy(a), tb=torch_from_numpy(b),
                   tx=torch_from_numpy(x), ty=torch_from_numpy(y))
        env["tc"] = env["tx"] > 0
    number, repeats = (200, 5) if quick else (2000, 60)
    rows = []
    for call, positional, torch_call in CALLS:
        stmts = {"pith": (call, env), "positional": (positional, env)}
        if torch is not None:
            stmts["torch"] = (torch_call, env)
        result = measure(stmts, number, repeats)
        ratios = {"positional": result["pith"] / result["positional"]}
        if "torch" in result:
            ratios["torch"] = result["pith"] / result["torch"]
        met = ratios["positional"] <= 1.5 and ratios.get("torch", 0) <= 0.3
        rows.append({"call": call, "positional_call": positional, **result, "ratios": ratios,
                     "met": met if "torch" in ratios else None})
        print(f"   {call}: pith {fmt_time(result['pith'])}, {positional} "
              f"{fmt_time(result['positional'])}, torch {fmt_time(result.get('torch'))} | "
              + ", ".join(f"/{k} {v:.3g}" for k, v in ratios.items()), flush=True)
    return rows


def call_lines(rows):
    lines = ["## The call layer", "",
             "Each call against the positional form of the same op in pith, and against "
             f"PyTorch's same call; 1-element and 4x8 float32 tensors. Target: {CALL_TARGET}.",
             "", "| call | pith | positional form | pith | PyTorch | call/positional | "
             "call/PyTorch | met? |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        lines.append("| " + " | ".join([
            f"`{row['call']}`", fmt_time(row["pith"]), f"`{row['positional_call']}`",
            fmt_time(row["positional"]), fmt_time(row.get("torch")),
            fmt_ratio(row["ratios"]["positional"]), fmt_ratio(row["ratios"].get("torch")),
            {True: "yes", False: "**no**", None: "-"}[row["met"]]]) + " |")
    return lines + [""]


# ---- report ------------------------------------------------------------------------------

def fmt_time(seconds):
    if seconds is None:
        return "-"
    for unit, factor in (("s", 1), ("ms", 1e3), ("µs", 1e6), ("ns", 1e9)):
        if seconds * factor >= 1:
            return f"{seconds * factor:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def fmt_ratio(r):
    return "-" if r is None else f"{r:.3g}"


def environment_lines(threads):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    try:
        commit = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)),
                                 "describe", "--always", "--dirty"], capture_output=True,
                                text=True, check=False).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    lines = [
        f"- Date: {datetime.datetime.now().isoformat(timespec='seconds')}; git {commit}",
        f"- Machine: {cpu}; {os.cpu_count()} logical CPUs; {platform.platform()}; load "
        f"average at the end {', '.join(f'{v:.2f}' for v in os.getloadavg())} (1, 5, 15 min)",
        f"- Python {platform.python_version()}; NumPy {np.__version__}; "
        f"PyTorch {torch.__version__ if torch else 'not installed'}; "
        f"pith {getattr(pith, '__version__', '?')} from `{os.path.dirname(pith.__file__)}`",
        f"- Threads: {threads} for every library (pith.get_num_threads() = "
        f"{pith.get_num_threads() if hasattr(pith, 'get_num_threads') else '?'}; "
        f"torch.get_num_threads() = {torch.get_num_threads() if torch else '-'})",
        "- Environment: " + ", ".join(f"`{k}={os.environ[k]}`" if k in os.environ
                                      else f"`{k}` unset" for k in ENV_SHOWN),
    ]
    return lines


def write_results(out_dir, rows, imports, threads, quick, calls=()):
    os.makedirs(out_dir, exist_ok=True)
    lines = ["# pith, NumPy and PyTorch side by side", "",
             "Produced by `python benchmarks/run.py"
             + (f" --threads {threads}" if threads != 2 else "")
             + (" --quick" if quick else "") + "`. Each time is the median over many "
             "repeats (timeit-style loops, the libraries interleaved within each repeat); "
             "ratios divide pith's median by the other library's. The machine is shared and "
             "noisy: compare ratios from one run, not times across runs.", ""]
    lines += environment_lines(threads) + [""]
    lines += ["| case | pith | NumPy | PyTorch | pith/NumPy | pith/PyTorch | target | met? |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        lines.append("| " + " | ".join([
            row["case"], fmt_time(row["pith"]), fmt_time(row.get("numpy")),
            fmt_time(row.get("torch")), fmt_ratio(row["ratios"].get("numpy")),
            fmt_ratio(row["ratios"].get("torch")), row["target"] or "-",
            {True: "yes", False: "**no**", None: "-"}[row["met"]]]) + " |")
    lines += ["", "Import time: wall time of `python -c \"import X\"` in a fresh process "
              "(median); the bare interpreter (`python -c pass`) takes "
              f"{fmt_time(imports['python'])}.", ""]
    lines += [f"![ratios](plot.png)", ""]
    if calls:
        lines += call_lines(calls)
    path = os.path.join(out_dir, "results.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def write_plot(out_dir, rows):
    """DIR/plot.png, or None without matplotlib (the table is written either way)."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [row["short"] for row in rows]
    ys = range(len(rows))
    fig, ax = plt.subplots(figsize=(9, 0.55 * len(rows) + 1.5))
    for offset, lib, color in ((-0.2, "numpy", "tab:blue"), (0.2, "torch", "tab:orange")):
        values = [row["ratios"].get(lib) or 0 for row in rows]
        ax.barh([y + offset for y in ys], values, height=0.38, color=color,
                label=f"pith / {'NumPy' if lib == 'numpy' else 'PyTorch'}")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yticks(list(ys))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("time ratio (log scale; < 1: pith is faster)")
    ax.legend(loc="lower right")
    ax.set_title("pith against NumPy and PyTorch (medians, same thread count)")
    fig.tight_layout()
    path = os.path.join(out_dir, "plot.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


SHORT = ["a + b (1 elem)", "x.sum() (4x4)", "x.view (4x4)", "x[0] (4x4)", "x + y (16M, out=)",
         "x * y (16M, out=)", "x + y (16M, alloc)", "matmul 1024", "MLP forward",
         "import"]


def main():
    if hasattr(pith, "set_num_threads"):
        pith.set_num_threads(ARGS.threads)
    if torch is not None:
        torch.set_num_threads(ARGS.threads)
    scale = 1 if not ARGS.quick else 0
    rng = np.random.default_rng(0)
    print("call layer ...", flush=True)
    calls = call_rows(rng, ARGS.quick)
    if ARGS.calls_only:
        path = os.path.join(ARGS.out, "calls_results.md")
        with open(path, "w") as f:
            f.write("\n".join(["# The call layer: pith beside PyTorch", "",
                               "Produced by `python benchmarks/run.py --calls-only"
                               + (" --quick" if ARGS.quick else "") + "`; medians of "
                               "timeit-style repeats, the statements interleaved.", ""]
                              + environment_lines(ARGS.threads) + [""]
                              + call_lines(calls)))
        print("\n".join(call_lines(calls)))
        print(f"wrote {path}")
        return
    cases = (small_cases(rng, scale or 1) + large_cases(rng, scale or 1)
             + matmul_case(rng, scale or 1) + mlp_case(rng, scale or 1))
    rows = []
    for (case, stmts, number, repeats, target), short in zip(cases, SHORT):
        if ARGS.quick:
            number, repeats = max(1, number // 10), 5
        print(f"{case} ...", flush=True)
        result = measure(stmts, number, repeats)
        ratios = {lib: result["pith"] / result[lib] for lib in ("numpy", "torch")
                  if lib in result}
        met = None
        if target is not None:
            try:
                met = bool(target[1](ratios))
            except KeyError:  # no PyTorch to compare with
                met = None
        rows.append({"case": case, "short": short, **result, "ratios": ratios,
                     "target": target[0] if target else None, "met": met})
        print("   " + ", ".join(f"{lib} {fmt_time(t)}" for lib, t in result.items())
              + " | " + ", ".join(f"pith/{lib} {r:.3g}" for lib, r in ratios.items()),
              flush=True)
    print("import times ...", flush=True)
    imports = import_times(3 if ARGS.quick else 15)
    ratios = {lib: imports["pith"] / imports[lib] for lib in ("numpy", "torch")
              if lib in imports}
    rows.append({"case": "`python -c \"import X\"` wall time", "short": SHORT[-1],
                 "pith": imports["pith"], "numpy": imports["numpy"],
                 "torch": imports.get("torch"), "ratios": ratios,
                 "target": "pith <= 50 ms", "met": imports["pith"] <= 0.050})
    print("   " + ", ".join(f"{k} {fmt_time(v)}" for k, v in imports.items()), flush=True)
    results = write_results(ARGS.out, rows, imports, ARGS.threads, ARGS.quick, calls)
    plot = write_plot(ARGS.out, rows)
    print(f"wrote {results}" + (f" and {plot}" if plot else " (no plot: matplotlib is not "
                                                           "installed)"))


if __name__ == "__main__":
    main()
