"""The BLAS libraries that pith could link, timed beside pith, NumPy and PyTorch (not a test).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=build/pypath \\
        python benchmarks/blas_peers.py [--rounds R] [--quick] [-k TEXT] [--out DIR]

Issue 11 asks for matmul at least as fast as NumPy's own OpenBLAS, and, where Debian's
OpenBLAS (0.3.21, the one pith links: Note [One OpenBLAS]) cannot get there, for figures of
the alternatives. This script times the same single-precision GEMMs through:

- `pith`, `numpy`, `torch`: each library's own matmul / F.linear, as in matmul.py;
- `openblas-debian`: `cblas_sgemm` of Debian's OpenMP OpenBLAS, the library pith links;
- `blis`: `cblas_sgemm` of Debian's BLIS (`libblis-openmp-dev`, its OpenMP build);
- `scipy-openblas32`: `scipy_cblas_sgemm` of the OpenBLAS that NumPy ships (PyPI's
  `scipy-openblas32`, its symbols prefixed with `scipy_`).

The three BLAS libraries are called through ctypes with preallocated operands and output
(beta = 0), so that their figures are the GEMM alone plus about a microsecond of ctypes per
call; the libraries allocate their outputs as users' code does. A backend whose library is not
installed is left out (and listed as missing). The driver, the interleaving and the warm-up
are matmul.py's: one warm worker process per (backend, thread count), sample by sample, the
order rotating from round to round; each cell is the median over rounds. Every result is
checked against NumPy's float64 product first. Writes DIR/blas_peers_results.md (default:
benchmarks/).
"""
import ctypes
import glob
import json
import os
import platform
import statistics
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matmul  # noqa: E402  (its worker protocol, driver helpers and formatting)

BACKENDS = ("pith", "numpy", "torch", "openblas-debian", "blis", "scipy-openblas32")
DEBIAN_OPENBLAS = "/usr/lib/*-linux-gnu/openblas-openmp/libopenblas.so.0"
DEBIAN_BLIS = "/usr/lib/*-linux-gnu/blis-openmp/libblis.so.4"

# (name, M, N, K, weights transposed): C[M,N] = A[M,K] @ B, with B stored [K,N], or [N,K]
# and read transposed (F.linear's weight layout).
CASES = [(f"F.linear({m}x784, 512x784 weight)", m, 512, 784, True) for m in (1, 32, 256)]
CASES += [(f"{m}x512 @ 512x512", m, 512, 512, False) for m in (1, 32, 256)]
CASES += [("F.linear(256x512, 512x512 weight)", 256, 512, 512, True),
          ("F.linear(256x64, 256x64 weight)", 256, 256, 64, True)]


def _operands(m, n, k, trans):
    rng = np.random.default_rng(m * 7 + n * 3 + k)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, k) if trans else (k, n)).astype(np.float32)
    return a, b


def _library_path(backend):
    if backend == "openblas-debian":
        found = glob.glob(DEBIAN_OPENBLAS)
    elif backend == "blis":
        found = glob.glob(DEBIAN_BLIS)
    else:
        try:
            import scipy_openblas32
        except ImportError:
            return None
        found = glob.glob(os.path.join(scipy_openblas32.get_lib_dir(), "lib*.so*"))
    return found[0] if found else None


class _Cblas:
    """One C library's sgemm through ctypes, with its own thread control."""

    def __init__(self, backend, threads):
        self.lib = ctypes.CDLL(_library_path(backend))
        prefix = "scipy_" if backend == "scipy-openblas32" else ""
        self.sgemm = getattr(self.lib, prefix + "cblas_sgemm")
        self.sgemm.restype = None
        self.sgemm.argtypes = ([ctypes.c_int] * 6 + [ctypes.c_float, ctypes.c_void_p, ctypes.c_int,
                               ctypes.c_void_p, ctypes.c_int, ctypes.c_float, ctypes.c_void_p,
                               ctypes.c_int])
        if backend == "blis":
            self.lib.bli_thread_set_num_threads(ctypes.c_long(threads))
            self.lib.bli_info_get_version_str.restype = ctypes.c_char_p
            self.lib.bli_arch_string.restype = ctypes.c_char_p
            arch = self.lib.bli_arch_string(self.lib.bli_arch_query_id())
            self.report = (f"BLIS {self.lib.bli_info_get_version_str().decode()}, "
                           f"{arch.decode()} kernels, "
                           f"{self.lib.bli_thread_get_num_threads()} threads")
        else:
            getattr(self.lib, prefix + "openblas_set_num_threads")(threads)
            config = getattr(self.lib, prefix + "openblas_get_config")
            config.restype = ctypes.c_char_p
            count = getattr(self.lib, prefix + "openblas_get_num_threads")()
            self.report = f"{config().decode()}, {count} threads"

    def bind(self, a, b, trans):
        """A call that computes a @ b (or a @ b.T) into a preallocated output."""
        m, k = a.shape
        n = b.shape[0] if trans else b.shape[1]
        c = np.empty((m, n), np.float32)
        args = (101, 111, 112 if trans else 111, m, n, k, 1.0, a.ctypes.data, k,
                b.ctypes.data, b.shape[1], 0.0, c.ctypes.data, n)
        sgemm, keep = self.sgemm, (a, b, c)  # the closure keeps the arrays alive

        def call():
            sgemm(*args)
            return keep
        return call, c


def worker(backend, threads):
    for var in ("PITH_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[var] = str(threads)
    if backend in ("pith", "numpy", "torch"):
        if backend == "numpy":
            lib = None
            try:
                from threadpoolctl import threadpool_limits
                threadpool_limits(threads)
            except ImportError:
                pass
        else:
            lib = __import__(backend)
            lib.set_num_threads(threads)
            if backend == "torch":
                lib.set_grad_enabled(False)
        report = matmul._thread_report(backend, lib)

        def bind(a, b, trans):
            if lib is not None:
                a, b = lib.from_numpy(a), lib.from_numpy(b)
            call = (lambda: a @ b.T) if trans else (lambda: a @ b)
            return call, None
    else:
        cblas = _Cblas(backend, threads)
        report, bind = cblas.report, cblas.bind
    print(json.dumps({"threads": report}), flush=True)
    timers = {}
    for line in sys.stdin:
        request = json.loads(line)
        name = request["case"]
        if name not in timers:
            _, m, n, k, trans = next(c for c in CASES if c[0] == name)
            call, out = bind(*_operands(m, n, k, trans), trans)
            result = call()
            result = out if out is not None else result
            values = np.asarray(result.numpy() if hasattr(result, "numpy") else result,
                                dtype=np.float64)
            timer = timeit.Timer(call)
            number, _ = timer.autorange()
            timers[name] = (timer, max(1, int(number * request["sample"] / 0.2)))
            print(json.dumps({"values": values.ravel().tolist(), "shape": values.shape}),
                  flush=True)
            continue
        timer, number = timers[name]
        timer.timeit(max(1, number // 10))
        print(json.dumps({"seconds": timer.timeit(number) / number}), flush=True)


def _available(backend):
    if backend in ("openblas-debian", "blis", "scipy-openblas32"):
        return _library_path(backend) is not None
    if backend == "torch":
        return matmul._has_torch()
    return True


def main():
    parser = matmul.driver_arguments(__doc__, rounds=11)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    args, thread_counts = matmul.parse_driver_arguments(parser)
    if args.worker:
        return worker(args.worker, thread_counts[0])
    cases = [c for c in CASES if args.k in c[0]]
    wanted = args.backends.split(",")
    backends = [b for b in wanted if _available(b)]
    missing = [b for b in wanted if b not in backends]
    workers = {(b, t): matmul.Worker(b, t, script=__file__)
               for t in thread_counts for b in backends}
    for (b, t), w in workers.items():
        for name, m, n, k, trans in cases:
            got = w.ask({"case": name, "sample": args.sample})
            a, w_ = (x.astype(np.float64) for x in _operands(m, n, k, trans))
            want = a @ (w_.T if trans else w_)
            if got["shape"] != list(want.shape) or not np.allclose(
                    np.reshape(got["values"], want.shape), want, rtol=1e-4, atol=1e-4):
                raise SystemExit(f"{b} ({t} threads) gives a wrong result for {name}")
    samples = matmul.collect_samples(args, [c[0] for c in cases], thread_counts, backends,
                                     workers)
    reports = {key: w.threads_report for key, w in workers.items()}
    for w in workers.values():
        w.close()
    write_results(args, cases, backends, missing, thread_counts, samples, reports)


def write_results(args, cases, backends, missing, thread_counts, samples, reports):
    ratio_to = [b for b in backends if b != "numpy"]
    lines = ["# BLAS peers (benchmarks/blas_peers.py)", "",
             f"Produced by `python benchmarks/blas_peers.py --rounds {args.rounds} --sample "
             f"{args.sample} --pause {args.pause}`" + (f" -k '{args.k}'" if args.k else "")
             + ". float32 GEMMs; each cell is the median over rounds of the time per call; "
             "the ratio columns are each backend's time over NumPy's (below 1 is faster than "
             "NumPy).", "",
             "| case | threads | " + " | ".join(backends) + " | "
             + " | ".join(f"{b} / NumPy" for b in ratio_to) + " |",
             "| --- | --- | " + " | ".join("---" for _ in backends + ratio_to) + " |"]
    for name, *_ in cases:
        for t in thread_counts:
            cell = {b: statistics.median(samples[(name, b, t)]) for b in backends}
            base = cell.get("numpy")
            lines.append("| " + " | ".join(
                [f"`{name}`", str(t)] + [matmul.fmt_time(cell[b]) for b in backends]
                + [f"{cell[b] / base:.2f}" if base else "-" for b in ratio_to]) + " |")
    lines += ["", "## Environment", "",
              f"- machine: {platform.machine()}, {os.cpu_count()} CPUs, load average "
              f"{os.getloadavg()[0]:.2f} at the end; Python {platform.python_version()}; "
              f"NumPy {np.__version__}"]
    if missing:
        lines.append(f"- not installed, left out: {', '.join(missing)}")
    for (b, t), report in sorted(reports.items()):
        lines.append(f"- {b}, {t} thread(s): {report}")
    for var in matmul.ENV_SHOWN:
        lines.append(f"- {var}={os.environ.get(var, '(unset)')}")
    text = "\n".join(lines) + "\n"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "blas_peers_results.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
