"""pith.compile against torch.compile, in one run (not a test).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PITH_NUM_THREADS=2 OMP_NUM_THREADS=2 \\
        PYTHONPATH=build/pypath python benchmarks/compile.py [--rounds R] [--quick] \\
        [--json PATH] [-k TEXT]

Float32 inference throughout (pith.no_grad, torch.inference_mode), the same thread count
for both libraries (--threads, default 2). Each library runs in worker processes of its own,
as in models.py (torch brings its own OpenMP runtime, and its dynamo installs a PEP 523 hook
of its own), started by this driver, which interleaves them round by round in an order that
rotates between rounds. The figures:

  - first call: in a fresh process, after the import and one eager call, the time of
    `compile(model)` plus the first compiled call, for the MLP 784-512-512-10 (batch 1) and
    a pre-norm transformer block (d=256, seq=64, 4 heads; batch 1); torch with a warm
    TORCHINDUCTOR_CACHE_DIR (filled by an untimed process first) and a cold one (a fresh
    empty directory per process). torch's lazy import of dynamo and inductor falls inside
    its first call, as it does for a user;
  - per-call overhead: a compiled `x + 1` on 1 element, and a compiled nn.Linear(4, 4) on
    a (1, 4) input, minus the same call made eagerly, in the same process;
  - batch 1 (MLP, block): compiled pith against torch.compile, and against the sum of the
    graph's GEMMs (pith.linear and pith.matmul on the same shapes) timed alone in eager pith;
  - the MLP at batch 32 and the block at batch 8: compiled pith against torch.compile;
  - other threads: a plain Python loop (calls in a loop) timed in a second thread while the
    first thread is inside a compiled call (a pith.compile'd function whose frame falls back
    and waits on a threading.Event, so the frame hook stays installed), while it waits on an
    Event outside any compiled call, and in a process that never imports pith.

Each worker figure is a median over timeit-style repeats (compiled loops, the eager and
compiled statements interleaved); each table cell is the median over rounds; ratios divide
pith's cell by torch's. torch.compile runs with its default mode and `dynamic=False` (one
graph per input shape, as pith's part 1 compiles). Without torch installed the torch
columns read "—" and the driver says so. The command and the environment are printed; the
figures go to stdout as Markdown tables (benchmarks/compile_results.md says where they
go), and with --json PATH to a JSON file.
"""
import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
THREAD_VARS = ("PITH_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
ENV_SHOWN = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "PITH_NUM_THREADS", "OMP_NUM_THREADS",
             "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "PYTHONPATH")
D_MODEL, SEQ, HEADS = 256, 64, 4

# (name, model, batch, figure): the steady-state cases, one worker process per (library, case)
CASES = [
    ("x + 1, 1 element", "add", 1, "overhead"),
    ("nn.Linear(4, 4), input (1, 4)", "linear4", 1, "overhead"),
    ("MLP 784-512-512-10, batch 1", "mlp", 1, "batch1"),
    ("transformer block, batch 1", "block", 1, "batch1"),
    ("MLP 784-512-512-10, batch 32", "mlp", 32, "batched"),
    ("transformer block, batch 8", "block", 8, "batched"),
    # the figures of pith.compile's part 2 (measured here already)
    ("pointwise chain gelu(x * w + b) * 0.5 + x, 4M float32", "chain", 1, "part2"),
    ("GPT 4x256 (benchmarks/models.py), batch 4x64", "gpt64", 4, "part2"),
    ("GPT 4x256 (benchmarks/models.py), batch 4x256", "gpt256", 4, "part2"),
]
FIRST_CASES = [("MLP 784-512-512-10, batch 1", "mlp"), ("transformer block, batch 1", "block")]
TARGETS = {"first_warm": 0.01, "first_cold": 0.002, "overhead": 1 / 8, "batch1_torch": 0.5,
           "batch1_gemms": 1.1, "batched": 1.0, "chain_torch": 1.0, "gpt_eager": 0.8,
           "gpt_torch": 1.0}


# ---- the models (written against a torch-like library `lib`) ------------------------------
#
# forward uses only `self`, its arguments and locals (no closure variables, no globals) and
# no control flow on tensors: what pith.compile's part 1 translates, so that no fallback
# hides in a figure. The workers check that pith captured every frame it saw.

def block_model(lib, d=D_MODEL, heads=HEADS):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = heads
            self.scale = (d // heads) ** -0.5
            self.ln_1 = nn.LayerNorm(d)
            self.q = nn.Linear(d, d)
            self.k = nn.Linear(d, d)
            self.v = nn.Linear(d, d)
            self.proj = nn.Linear(d, d)
            self.ln_2 = nn.LayerNorm(d)
            self.fc = nn.Linear(d, 4 * d)
            self.gelu = nn.GELU()
            self.fc_proj = nn.Linear(4 * d, d)

        def forward(self, x):
            B, T, C = x.shape
            H = self.heads
            h = self.ln_1(x)
            q = self.q(h).view(B, T, H, C // H).transpose(1, 2)
            k = self.k(h).view(B, T, H, C // H).transpose(1, 2)
            v = self.v(h).view(B, T, H, C // H).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * self.scale
            att = att.softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, C)
            x = x + self.proj(y)
            return x + self.fc_proj(self.gelu(self.fc(self.ln_2(x))))

    return Block()


def chain_model(lib, n=1 << 22):
    """The pointwise chain of bench_fusion.c, with w and b as buffers."""
    F = lib.nn.functional

    class Chain(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("w", lib.ones(n))
            self.register_buffer("b", lib.zeros(n))

        def forward(self, x):
            return F.gelu(x * self.w + self.b) * 0.5 + x

    return Chain()


def add_one(x):
    return x + 1


def hold(event):
    """Waits inside a compiled call: event.wait() is an unknown call, so the frame falls
    back and runs eagerly, with the frame hook installed until it returns."""
    event.wait()


def loop(n):
    s = 0
    for i in range(n):
        s += increment(i)
    return s


def increment(i):
    return i + 1


def build(lib, model, batch):
    """(module or function, input) with the weights and inputs models.py draws."""
    import numpy as np
    import models
    if model == "add":
        return add_one, lib.from_numpy(np.array([0.5], dtype=np.float32))
    if model == "linear4":
        m = lib.nn.Linear(4, 4)
        shape = (batch, 4)
    elif model == "mlp":
        m = models.mlp_model(lib)
        shape = (batch, 784)
    elif model == "chain":
        m = chain_model(lib)
        shape = (1 << 22,)
    elif model.startswith("gpt"):
        m = models.gpt_model(lib).eval()
        with lib.no_grad():
            models._set_weights(lib, m)
        return m, lib.from_numpy(models._input((batch, int(model[3:])), "tokens"))
    else:
        m = block_model(lib)
        shape = (batch, SEQ, D_MODEL)
    m.eval()
    with lib.no_grad():
        models._set_weights(lib, m)
    return m, lib.from_numpy(models._input(shape, "images"))


# ---- the workers --------------------------------------------------------------------------

def import_lib(name, threads):
    for var in THREAD_VARS:
        os.environ[var] = str(threads)
    sys.path.insert(0, HERE)
    lib = __import__(name)
    lib.set_num_threads(threads)
    if name == "pith" and not hasattr(lib, "compile"):
        raise SystemExit(f"pith from {os.path.dirname(lib.__file__)} has no pith.compile: "
                         "build a tree that has it (python_bindings/pith/compiler.py)")
    return lib


def grad_context(lib):
    return lib.inference_mode() if lib.__name__ == "torch" else lib.no_grad()


def compile_fn(lib, fn):
    if lib.__name__ == "torch":
        return lib.compile(fn, dynamic=False)
    return lib.compile(fn)


def to_numpy(t):
    import numpy as np
    return np.asarray(t.numpy(), dtype=np.float32)


def pith_capture_report(lib):
    """None when every frame pith.compile saw was captured, else what fell back."""
    s = lib.compiler.stats()
    if s["frames_captured"] >= 1 and not s["skip_reasons"]:
        return None
    return (f"frames_seen {s['frames_seen']}, frames_captured {s['frames_captured']}, "
            f"skips: {s['skip_reasons']}")


def lib_info(lib):
    return {"version": getattr(lib, "__version__", "?"),
            "path": os.path.dirname(lib.__file__), "threads": lib.get_num_threads()}


def worker_first(lib_name, model, threads):
    """The first compiled call of a fresh process, after one eager call."""
    import numpy as np
    lib = import_lib(lib_name, threads)
    m, x = build(lib, model, 1)
    with grad_context(lib):
        start = time.perf_counter()
        eager = m(x)
        eager_s = time.perf_counter() - start
        start = time.perf_counter()
        compiled = compile_fn(lib, m)
        y = compiled(x)
        first_s = time.perf_counter() - start
    out = {"first": first_s, "eager": eager_s, "checksum": float(to_numpy(eager).sum()),
           "info": lib_info(lib)}
    if lib_name == "pith":
        out["bitwise"] = bool(np.array_equal(to_numpy(y), to_numpy(eager)))
        out["fallback"] = pith_capture_report(lib)
    else:
        out["close"] = bool(np.allclose(to_numpy(y), to_numpy(eager), rtol=1e-4, atol=1e-5))
    print(json.dumps(out))


GEN_PROMPT, GEN_TOKENS = 8, 64


def worker_generate(lib_name, mode, threads):
    """A fresh process: builds the GPT of benchmarks/models.py, makes one eager call on
    the prompt, then times the whole greedy generation of GEN_TOKENS tokens, one forward per
    token on the growing sequence, with the model compiled (compile time included) or not."""
    import numpy as np
    import models
    lib = import_lib(lib_name, threads)
    m = models.gpt_model(lib).eval()
    with grad_context(lib):
        models._set_weights(lib, m)
        idx = lib.from_numpy(models._input((1, GEN_PROMPT), "tokens"))
        m(idx)
        start = time.perf_counter()
        model = compile_fn(lib, m) if mode == "compiled" else m
        for _ in range(GEN_TOKENS):
            logits = model(idx)
            idx = lib.cat([idx, logits[:, -1, :].argmax(dim=-1, keepdim=True)], dim=1)
        seconds = time.perf_counter() - start
    out = {"seconds": seconds, "tokens": to_numpy(idx).tolist(), "info": lib_info(lib)}
    if lib_name == "pith" and mode == "compiled":
        out["fallback"] = pith_capture_report(lib)
    print(json.dumps(out))


def measure(stmts, env, seconds):
    """{name: median seconds per call} of each statement, taking turns repeat by repeat
    until `seconds` have passed (at least 5 repeats each). Each repeat is a compiled loop of
    a calibrated number of calls (about 2 ms), garbage collector off, as timeit does."""
    timers = {name: timeit.Timer(stmt, globals=env) for name, stmt in stmts.items()}
    numbers = {}
    for name, timer in timers.items():
        timer.timeit(3)  # warm-up: caches, allocator pools, lazy init
        once = max(timer.timeit(3) / 3, 1e-8)
        numbers[name] = max(1, min(100000, int(0.002 / once)))
        timer.timeit(numbers[name])
    samples = {name: [] for name in timers}
    order = list(timers)
    deadline = time.perf_counter() + seconds
    r = 0
    while time.perf_counter() < deadline or r < 5:
        for name in order[r % len(order):] + order[:r % len(order)]:
            samples[name].append(timers[name].timeit(numbers[name]) / numbers[name])
        r += 1
    return {name: statistics.median(s) for name, s in samples.items()}


def gemm_statements(lib, m, x, model):
    """(statements, env): each GEMM of the model's graph on its own, on inputs of the graph's
    shapes and strides, through pith.linear and pith.matmul."""
    env = {"pith": lib}
    if model == "mlp":
        h = x
        stmts = {}
        for i in (0, 2, 4):
            env[f"x{i}"], env[f"w{i}"], env[f"b{i}"] = h, m[i].weight, m[i].bias
            stmts[f"linear {i}"] = f"pith.linear(x{i}, w{i}, b{i})"
            h = m[i](h).relu() if i < 4 else None
        return stmts, env
    B, T, C = x.shape
    H = m.heads
    h = m.ln_1(x)
    env["h"] = h
    stmts = {}
    for name in ("q", "k", "v"):
        env[f"w_{name}"], env[f"b_{name}"] = getattr(m, name).weight, getattr(m, name).bias
        stmts[f"linear {name}"] = f"pith.linear(h, w_{name}, b_{name})"
    q = m.q(h).view(B, T, H, C // H).transpose(1, 2)
    k = m.k(h).view(B, T, H, C // H).transpose(1, 2)
    v = m.v(h).view(B, T, H, C // H).transpose(1, 2)
    env.update(q=q, kt=k.transpose(-2, -1), v=v)
    stmts["q @ k^T"] = "pith.matmul(q, kt)"
    att = ((q @ k.transpose(-2, -1)) * m.scale).softmax(dim=-1)
    env["att"] = att
    stmts["att @ v"] = "pith.matmul(att, v)"
    y = (att @ v).transpose(1, 2).reshape(B, T, C)
    x1 = x + m.proj(y)
    h2 = m.ln_2(x1)
    up = m.gelu(m.fc(h2))
    for name, inp in (("proj", y), ("fc", h2), ("fc_proj", up)):
        env[f"in_{name}"] = inp
        env[f"w_{name}"], env[f"b_{name}"] = getattr(m, name).weight, getattr(m, name).bias
        stmts[f"linear {name}"] = f"pith.linear(in_{name}, w_{name}, b_{name})"
    return stmts, env


def worker_steady(lib_name, model, batch, threads, seconds):
    """Eager and compiled calls of one case (and for pith at batch 1, its GEMMs alone)."""
    import numpy as np
    lib = import_lib(lib_name, threads)
    m, x = build(lib, model, batch)
    out = {"info": lib_info(lib)}
    with grad_context(lib):
        if lib_name == "pith":
            lib.compiler.reset()
        compiled = compile_fn(lib, m)
        eager = m(x)
        y = compiled(x)  # compiles
        out["checksum"] = float(to_numpy(eager).sum())
        if lib_name == "pith":
            out["bitwise"] = bool(np.array_equal(to_numpy(y), to_numpy(eager)))
            out["fallback"] = pith_capture_report(lib)
        else:
            out["close"] = bool(np.allclose(to_numpy(y), to_numpy(eager), rtol=1e-4,
                                            atol=1e-5))
        env = {"eager": m, "compiled": compiled, "x": x}
        stmts = {"eager": "eager(x)", "compiled": "compiled(x)"}
        gemms = {}
        if lib_name == "pith" and batch == 1 and model in ("mlp", "block"):
            gemms, genv = gemm_statements(lib, m, x, model)
            env.update(genv)
            stmts.update(gemms)
            # the same GEMMs one after the other, as the graph runs them: each core's part
            # of the weights then leaves L2 between calls, as it does in the model
            stmts["gemm sequence"] = "; ".join(gemms.values())
        medians = measure(stmts, env, seconds)
    out["eager"], out["compiled"] = medians["eager"], medians["compiled"]
    if gemms:
        out["gemms"] = {name: medians[name] for name in gemms}
        out["gemm_sequence"] = medians["gemm sequence"]
    if lib_name == "pith" and out.get("fallback") is None:
        out["fallback"] = pith_capture_report(lib)  # a recompile or skip while timing
    print(json.dumps(out))


def run_loop_block(n, repeats, wait, probe=None):
    """{'median': seconds of loop(n), 'probe': probe()}, timed in a second thread while this
    thread calls wait(event); the second thread runs `probe` first, to report the state it
    was timed in, and sets the event when it is done (also when it fails)."""
    event = threading.Event()
    result = {}

    def second():
        try:
            time.sleep(0.005)  # let this thread get into wait()
            result["probe"] = probe() if probe else None
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                loop(n)
                times.append(time.perf_counter() - start)
            result["median"] = statistics.median(times)
        finally:
            event.set()
    thread = threading.Thread(target=second)
    thread.start()
    wait(event)
    thread.join()
    if "median" not in result:
        raise SystemExit("the timed loop failed in its thread")
    return result


def worker_threads(use_pith, threads, blocks, n, repeats):
    """The loop's time in a second thread: with pith imported, while this thread is inside a
    compiled call ('held') and while it waits outside one ('idle'); without pith ('bare')."""
    for var in THREAD_VARS:
        os.environ[var] = str(threads)
    plain_wait = threading.Event.wait
    loop(n)  # warm-up
    samples = {"held": [], "idle": []} if use_pith else {"bare": []}
    probes = {}
    if use_pith:
        pith = import_lib("pith", threads)
        compiled_hold = pith.compile(hold)
        hooked = pith.compiler.hook_installed
    for b in range(blocks):
        for kind in (list(samples) if b % 2 == 0 else list(samples)[::-1]):
            if kind == "held":
                r = run_loop_block(n, repeats, compiled_hold, hooked)
            elif kind == "idle":
                r = run_loop_block(n, repeats, plain_wait, hooked)
            else:
                r = run_loop_block(n, repeats, plain_wait)
            samples[kind].append(r["median"])
            probes.setdefault(kind, []).append(r["probe"])
    out = {kind: statistics.median(s) for kind, s in samples.items()}
    if use_pith:
        out["hook_installed"] = {kind: sorted(set(p)) for kind, p in probes.items()}
        out["stats"] = {k: v for k, v in pith.compiler.stats().items()
                        if k in ("frames_seen", "frames_captured", "frames_skipped",
                                 "skip_reasons")}
    print(json.dumps(out))


# ---- the driver ---------------------------------------------------------------------------

def run_worker(args, extra_env=None):
    env = dict(os.environ)
    env.update(extra_env or {})
    cmd = [sys.executable, os.path.abspath(__file__), "--worker"] + [str(a) for a in args]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"worker {' '.join(map(str, args))} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def has_torch():
    import importlib.util
    return importlib.util.find_spec("torch") is not None


def fmt_time(s):
    if s is None:
        return "—"
    if s >= 1:
        return f"{s:.2f} s"
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.2f} µs"


def fmt_ratio(r):
    return "—" if r is None else f"{r:.3g}"


def met(ratio, target):
    return "—" if ratio is None else ("yes" if ratio <= target else "**no**")


def median_or_none(values):
    return statistics.median(values) if values else None


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def rotate(items, r):
    return items[r % len(items):] + items[:r % len(items)]


def environment_lines(infos):
    try:
        commit = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"],
                                capture_output=True, text=True).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    lines = [f"- git {commit}; {platform.machine()}, {os.cpu_count()} CPUs, load average "
             f"{', '.join(f'{v:.2f}' for v in os.getloadavg())} at the end; "
             f"Python {platform.python_version()}"]
    for name, info in sorted(infos.items()):
        lines.append(f"- {name} {info['version']} from `{info['path']}`, "
                     f"{info['threads']} threads")
    lines.append("- environment: " + ", ".join(
        f"`{k}={os.environ[k]}`" if k in os.environ else f"`{k}` unset" for k in ENV_SHOWN))
    return lines


def command_line():
    return "command: " + shlex.join(
        [f"{k}={os.environ[k]}" for k in ENV_SHOWN if k in os.environ]
        + [sys.executable] + sys.argv) + "  (" + ", ".join(
        f"{k} unset" for k in ENV_SHOWN if k not in os.environ) + ")"


def first_call_rows(samples, torch_ok):
    lines = ["## First call", "",
             "A fresh process: import, one eager call, then `compile(model)` and the first "
             "compiled call, timed together (batch 1). torch warm: TORCHINDUCTOR_CACHE_DIR "
             "filled by an earlier process; cold: an empty one. Targets: pith/torch warm <= "
             f"{TARGETS['first_warm']}, pith/torch cold <= {TARGETS['first_cold']}.", "",
             "| model | pith | torch warm | torch cold | pith/torch warm | met? | "
             "pith/torch cold | met? | eager call (pith, torch) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    rows = {}
    for name, model in FIRST_CASES:
        p = median_or_none(samples.get((model, "pith"), []))
        w = median_or_none(samples.get((model, "torch-warm"), []))
        c = median_or_none(samples.get((model, "torch-cold"), []))
        pe = median_or_none(samples.get((model, "pith-eager"), []))
        te = median_or_none(samples.get((model, "torch-eager"), []))
        rw, rc = ratio(p, w), ratio(p, c)
        rows[name] = {"pith": p, "torch_warm": w, "torch_cold": c, "ratio_warm": rw,
                      "ratio_cold": rc, "pith_eager": pe, "torch_eager": te}
        lines.append(f"| {name} | {fmt_time(p)} | {fmt_time(w)} | {fmt_time(c)} | "
                     f"{fmt_ratio(rw)} | {met(rw, TARGETS['first_warm'])} | {fmt_ratio(rc)} | "
                     f"{met(rc, TARGETS['first_cold'])} | {fmt_time(pe)}, {fmt_time(te)} |")
    return lines, rows


def steady_rows(samples):
    def cell(name, lib, key):
        return median_or_none([s[key] for s in samples.get((name, lib), []) if key in s])

    def overhead(name, lib):
        return median_or_none([s["compiled"] - s["eager"] for s in samples.get((name, lib), [])])

    lines = ["## Per-call overhead", "",
             "Compiled minus eager, in the same process (median over rounds of each worker's "
             "difference of medians). Target: pith's overhead <= 1/8 of torch's "
             f"(ratio <= {TARGETS['overhead']:.3g}).", "",
             "| function | pith eager | pith compiled | pith overhead | torch eager | "
             "torch compiled | torch overhead | pith/torch overhead | met? |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    rows = {}
    for name, model, batch, figure in CASES:
        if figure != "overhead":
            continue
        po, to = overhead(name, "pith"), overhead(name, "torch")
        r = ratio(po, to)
        rows[name] = {"pith_eager": cell(name, "pith", "eager"),
                      "pith_compiled": cell(name, "pith", "compiled"), "pith_overhead": po,
                      "torch_eager": cell(name, "torch", "eager"),
                      "torch_compiled": cell(name, "torch", "compiled"), "torch_overhead": to,
                      "ratio": r}
        row = rows[name]
        lines.append(f"| {name} | {fmt_time(row['pith_eager'])} | "
                     f"{fmt_time(row['pith_compiled'])} | {fmt_time(po)} | "
                     f"{fmt_time(row['torch_eager'])} | {fmt_time(row['torch_compiled'])} | "
                     f"{fmt_time(to)} | {fmt_ratio(r)} | {met(r, TARGETS['overhead'])} |")
    lines += ["", "## Batch 1", "",
              "Compiled pith against torch.compile (target <= "
              f"{TARGETS['batch1_torch']}), and against the sum of the graph's GEMMs, each "
              "timed alone in eager pith on the graph's shapes (target <= "
              f"{TARGETS['batch1_gemms']}): each in a loop of its own (whose weights stay "
              "in L2 from call to call), and all of them in one statement, in the graph's "
              "order.", "",
              "| model | pith compiled | torch compiled | pith/torch | met? | pith GEMMs "
              "alone (sum) | pith/GEMMs | met? | GEMMs in sequence | pith/sequence | met? | "
              "pith eager | torch eager |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, model, batch, figure in CASES:
        if figure != "batch1":
            continue
        pc, tc = cell(name, "pith", "compiled"), cell(name, "torch", "compiled")
        gemm_sums = [sum(s["gemms"].values()) for s in samples.get((name, "pith"), [])
                     if "gemms" in s]
        g = median_or_none(gemm_sums)
        gs = median_or_none([s["gemm_sequence"] for s in samples.get((name, "pith"), [])
                             if "gemm_sequence" in s])
        rt, rg, rs = ratio(pc, tc), ratio(pc, g), ratio(pc, gs)
        rows[name] = {"pith_compiled": pc, "torch_compiled": tc, "ratio_torch": rt,
                      "gemms": g, "ratio_gemms": rg, "gemm_sequence": gs,
                      "ratio_gemm_sequence": rs,
                      "pith_eager": cell(name, "pith", "eager"),
                      "torch_eager": cell(name, "torch", "eager")}
        lines.append(f"| {name} | {fmt_time(pc)} | {fmt_time(tc)} | {fmt_ratio(rt)} | "
                     f"{met(rt, TARGETS['batch1_torch'])} | {fmt_time(g)} | {fmt_ratio(rg)} | "
                     f"{met(rg, TARGETS['batch1_gemms'])} | {fmt_time(gs)} | {fmt_ratio(rs)} | "
                     f"{met(rs, TARGETS['batch1_gemms'])} | "
                     f"{fmt_time(rows[name]['pith_eager'])} | "
                     f"{fmt_time(rows[name]['torch_eager'])} |")
    lines += ["", "## Batched", "",
              f"Compiled pith against torch.compile (target <= {TARGETS['batched']}).", "",
              "| case | pith compiled | torch compiled | pith/torch | met? | pith eager | "
              "torch eager |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, model, batch, figure in CASES:
        if figure != "batched":
            continue
        pc, tc = cell(name, "pith", "compiled"), cell(name, "torch", "compiled")
        rt = ratio(pc, tc)
        rows[name] = {"pith_compiled": pc, "torch_compiled": tc, "ratio_torch": rt,
                      "pith_eager": cell(name, "pith", "eager"),
                      "torch_eager": cell(name, "torch", "eager")}
        lines.append(f"| {name} | {fmt_time(pc)} | {fmt_time(tc)} | {fmt_ratio(rt)} | "
                     f"{met(rt, TARGETS['batched'])} | {fmt_time(rows[name]['pith_eager'])} | "
                     f"{fmt_time(rows[name]['torch_eager'])} |")
    lines += ["", "## Part 2's figures", "",
              "Compiled pith against eager pith (the GPT: target <= "
              f"{TARGETS['gpt_eager']}) and against torch.compile (the chain: target <= "
              f"{TARGETS['chain_torch']}; the GPT: <= {TARGETS['gpt_torch']}).", "",
              "| case | pith eager | pith compiled | compiled/eager | torch eager | torch "
              "compiled | pith/torch | met? |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, model, batch, figure in CASES:
        if figure != "part2":
            continue
        pe, pc = cell(name, "pith", "eager"), cell(name, "pith", "compiled")
        te, tc = cell(name, "torch", "eager"), cell(name, "torch", "compiled")
        re_, rt = ratio(pc, pe), ratio(pc, tc)
        rows[name] = {"pith_eager": pe, "pith_compiled": pc, "ratio_eager": re_,
                      "torch_eager": te, "torch_compiled": tc, "ratio_torch": rt}
        if model == "chain":
            verdict = met(rt, TARGETS["chain_torch"])
        else:
            verdict = (f"eager {met(re_, TARGETS['gpt_eager'])}, "
                       f"torch {met(rt, TARGETS['gpt_torch'])}")
        lines.append(f"| {name} | {fmt_time(pe)} | {fmt_time(pc)} | {fmt_ratio(re_)} | "
                     f"{fmt_time(te)} | {fmt_time(tc)} | {fmt_ratio(rt)} | {verdict} |")
    return lines, rows


def thread_rows(samples, n):
    held = median_or_none(samples.get("held", []))
    idle = median_or_none(samples.get("idle", []))
    bare = median_or_none(samples.get("bare", []))
    lines = ["## Other threads", "",
             f"`loop({n})` (a for loop calling a Python function each turn) timed in a second "
             "thread; the first thread waits on a threading.Event inside a compiled call "
             "(the frame falls back; the hook stays installed), or outside one, or in a "
             "process that never imports pith.", "",
             "| first thread | loop time | / without pith | / pith idle |",
             "| --- | --- | --- | --- |"]
    for label, value in (("inside a compiled call", held), ("outside, pith imported", idle),
                         ("no pith in the process", bare)):
        lines.append(f"| {label} | {fmt_time(value)} | {fmt_ratio(ratio(value, bare))} | "
                     f"{fmt_ratio(ratio(value, idle))} |")
    rows = {"held": held, "idle": idle, "bare": bare, "held_over_bare": ratio(held, bare),
            "idle_over_bare": ratio(idle, bare), "held_over_idle": ratio(held, idle)}
    return lines, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2, help="threads for both libraries")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.5,
                        help="timed seconds per case in each worker run")
    parser.add_argument("--quick", action="store_true", help="one short round (smoke run)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures there")
    parser.add_argument("-k", default="", help="only sections whose name contains this, of "
                        "first, steady, threads, generate")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        kind, rest = args.worker[0], args.worker[1:]
        if kind == "first":
            return worker_first(rest[0], rest[1], int(rest[2]))
        if kind == "steady":
            return worker_steady(rest[0], rest[1], int(rest[2]), int(rest[3]), float(rest[4]))
        if kind == "generate":
            return worker_generate(rest[0], rest[1], int(rest[2]))
        return worker_threads(rest[0] == "pith", int(rest[1]), int(rest[2]), int(rest[3]),
                              int(rest[4]))
    if args.quick:
        args.rounds, args.seconds = 1, 0.3
    print(command_line(), flush=True)
    torch_ok = has_torch()
    if not torch_ok:
        print("torch is not installed: skipping the torch columns (they read —)", flush=True)
    libs = ["pith"] + (["torch"] if torch_ok else [])
    sections = [s for s in ("first", "steady", "threads", "generate") if args.k in s]
    infos, first, steady, threads_samples, generate = {}, {}, {}, {}, {}
    loop_n, loop_repeats, blocks = 20000, (5 if args.quick else 20), (2 if args.quick else 6)
    warm_dir = tempfile.mkdtemp(prefix="pith-bench-inductor-warm-")
    try:
        torch_env = {"TORCHINDUCTOR_CACHE_DIR": warm_dir}
        if torch_ok and ("first" in sections or "steady" in sections):
            print("filling torch's warm cache (untimed) ...", flush=True)
            for _, model in FIRST_CASES:
                run_worker(["first", "torch", model, args.threads], torch_env)
        for r in range(args.rounds):
            if "first" in sections:
                variants = [(model, v) for _, model in FIRST_CASES
                            for v in ["pith"] + (["torch-warm", "torch-cold"] if torch_ok
                                                 else [])]
                for model, v in rotate(variants, r):
                    if v == "torch-cold":
                        cold = tempfile.mkdtemp(prefix="pith-bench-inductor-cold-")
                        try:
                            res = run_worker(["first", "torch", model, args.threads],
                                             {"TORCHINDUCTOR_CACHE_DIR": cold})
                        finally:
                            shutil.rmtree(cold, ignore_errors=True)
                    else:
                        lib = v.split("-")[0]
                        res = run_worker(["first", lib, model, args.threads],
                                         torch_env if lib == "torch" else None)
                        first.setdefault((model, f"{lib}-eager"), []).append(res["eager"])
                    first.setdefault((model, v), []).append(res["first"])
                    infos[v.split("-")[0]] = res["info"]
                    report_checks(f"first call, {model}, {v}", res)
                    print(f"   first call {model} {v}: {fmt_time(res['first'])}", flush=True)
            if "steady" in sections:
                variants = [(case, lib) for case in CASES for lib in libs]
                for (name, model, batch, _), lib in rotate(variants, r):
                    res = run_worker(["steady", lib, model, batch, args.threads, args.seconds],
                                     torch_env if lib == "torch" else None)
                    steady.setdefault((name, lib), []).append(res)
                    infos[lib] = res["info"]
                    report_checks(f"{name}, {lib}", res)
                    report_checksums(name, steady)
                    print(f"   {name} {lib}: eager {fmt_time(res['eager'])}, compiled "
                          f"{fmt_time(res['compiled'])}", flush=True)
            if "threads" in sections:
                for who in rotate(["pith", "bare"], r):
                    res = run_worker(["threads", who, args.threads, blocks, loop_n,
                                      loop_repeats])
                    for kind in ("held", "idle", "bare"):
                        if kind in res:
                            threads_samples.setdefault(kind, []).append(res[kind])
                    if who == "pith":
                        report_hook(res)
                print("   threads: " + ", ".join(f"{k} {fmt_time(v[-1])}"
                                                  for k, v in threads_samples.items()),
                      flush=True)
            if "generate" in sections:
                variants = [(lib, mode) for lib in libs for mode in ("eager", "compiled")]
                for lib, mode in rotate(variants, r):
                    res = run_worker(["generate", lib, mode, args.threads],
                                     torch_env if lib == "torch" else None)
                    generate.setdefault((lib, mode), []).append(res["seconds"])
                    generate.setdefault(("tokens", lib, mode), []).append(res["tokens"])
                    if res.get("fallback"):
                        print(f"WARNING: generation, pith compiled: {res['fallback']}",
                              flush=True)
                    print(f"   generation {lib} {mode}: {fmt_time(res['seconds'])}",
                          flush=True)
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(warm_dir, ignore_errors=True)
    lines = ["# pith.compile against torch.compile (benchmarks/compile.py)", "",
             command_line(), "",
             f"{args.rounds} rounds; float32 inference; {args.threads} threads for both "
             "libraries, each in its own processes, interleaved." +
             ("" if torch_ok else " torch is not installed: no torch columns."), ""]
    figures = {}
    if "first" in sections:
        more, figures["first_call"] = first_call_rows(first, torch_ok)
        lines += more + [""]
    if "steady" in sections:
        more, figures["steady"] = steady_rows(steady)
        lines += more + [""]
    if "threads" in sections:
        more, figures["threads"] = thread_rows(threads_samples, loop_n)
        lines += more + [""]
    if "generate" in sections:
        cells = {k: median_or_none(v) for k, v in generate.items() if k[0] != "tokens"}
        pc, pe = cells.get(("pith", "compiled")), cells.get(("pith", "eager"))
        tc, te = cells.get(("torch", "compiled")), cells.get(("torch", "eager"))
        same = len({str(v[0]) for k, v in generate.items() if k[0] == "tokens"}) == 1
        lines += ["## Generation", "",
                  f"{GEN_TOKENS} tokens, greedy, from a prompt of {GEN_PROMPT}, with the GPT of "
                  "benchmarks/models.py, in a fresh process after one eager call; the whole "
                  "loop timed, compiling included (torch with a warm cache). Targets: pith "
                  "compiled <= 0.2x torch.compile's loop, and faster than pith eager. "
                  f"Every run generated the same tokens: {'yes' if same else '**no**'}.", "",
                  "| pith eager | pith compiled | pith compiled/eager | torch eager | torch "
                  "compiled | pith/torch compiled |", "| --- | --- | --- | --- | --- | --- |",
                  f"| {fmt_time(pe)} | {fmt_time(pc)} | {fmt_ratio(ratio(pc, pe))} | "
                  f"{fmt_time(te)} | {fmt_time(tc)} | {fmt_ratio(ratio(pc, tc))} |", ""]
        figures["generate"] = {"pith_eager": pe, "pith_compiled": pc, "torch_eager": te,
                               "torch_compiled": tc, "same_tokens": same}
    lines += ["## Environment", ""] + environment_lines(infos)
    print("\n".join(lines))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": command_line(), "rounds": args.rounds,
                       "threads": args.threads, "torch": torch_ok, "figures": figures,
                       "targets": TARGETS, "info": infos,
                       "raw": {"first": {f"{k[0]}/{k[1]}": v for k, v in first.items()},
                               "steady": {f"{k[0]}/{k[1]}": v for k, v in steady.items()},
                               "threads": threads_samples}}, f, indent=1)
        print(f"wrote {args.json}")


def report_checks(label, res):
    """Says so when a compiled result differs from eager or pith fell back somewhere."""
    if res.get("bitwise") is False:
        print(f"   WARNING {label}: pith's compiled result is not bitwise equal to eager",
              flush=True)
    if res.get("close") is False:
        print(f"   WARNING {label}: torch's compiled result differs from eager", flush=True)
    if res.get("fallback"):
        print(f"   WARNING {label}: pith did not capture every frame ({res['fallback']}); "
              "the figure times a fallback", flush=True)


def report_checksums(name, steady):
    """Says so when pith's and torch's eager outputs (the same weights and inputs) differ."""
    sums = {lib: runs[-1]["checksum"] for (case, lib), runs in steady.items() if case == name}
    if len(sums) == 2 and abs(sums["pith"] - sums["torch"]) > 1e-3 * max(1.0, abs(sums["torch"])):
        print(f"   WARNING {name}: output checksums differ: {sums}", flush=True)


def report_hook(res):
    seen = res.get("hook_installed", {})
    if seen.get("held") != [True]:
        print(f"   WARNING threads: hook_installed() inside the compiled call read "
              f"{seen.get('held')}, not [True]: the 'inside' figure may not measure the hook",
              flush=True)
    if seen.get("idle") != [False]:
        print(f"   WARNING threads: hook_installed() outside any compiled call read "
              f"{seen.get('idle')}, not [False]", flush=True)


if __name__ == "__main__":
    sys.exit(main())
