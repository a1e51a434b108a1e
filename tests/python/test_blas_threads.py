"""The BLAS in the process and its threads (Note [BLAS threads]): pith.set_num_threads and
PITH_NUM_THREADS set the BLAS's own thread count, with the OpenMP build that pith links and
with Debian's pthread build put in its place through LD_LIBRARY_PATH (in a subprocess);
pith.show_config(), which names the build that was loaded, under each; and the OpenMP wait
policy that pith gives libgomp (Note [OpenMP wait policy]).

The pthread build comes from Debian's libopenblas0-pthread (scripts/setup.sh installs it).
Without it those tests skip, unless PITH_TEST_REQUIRE_PTHREAD_BLAS=1 (scripts/test.sh sets
it, so CI runs them), which makes them fail instead."""
import ctypes
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pith

OPENMP_DIR = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
PTHREAD_DIR = "/usr/lib/x86_64-linux-gnu/openblas-pthread"


def openblas():
    """The OpenBLAS already in this process: dlopen by SONAME finds the loaded library."""
    lib = ctypes.CDLL("libopenblas.so.0")
    lib.openblas_get_config.restype = ctypes.c_char_p
    return lib


def loaded_openblas_path():
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libopenblas"):
                return path
    return None


def run_python(code, **env_extra):
    """Runs `code` in a fresh interpreter with pith on the path; returns its last stdout
    line as JSON."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    for var in ("PITH_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "LD_LIBRARY_PATH"):
        env.pop(var, None)
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def require_pthread_build():
    if os.path.exists(os.path.join(PTHREAD_DIR, "libopenblas.so.0")):
        return
    reason = (f"Debian's pthread OpenBLAS ({PTHREAD_DIR}, package libopenblas0-pthread) is "
              "not installed; scripts/setup.sh installs it")
    if os.environ.get("PITH_TEST_REQUIRE_PTHREAD_BLAS") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


# ---- the build in this process (the one pith links) --------------------------------------

def test_blas_info_describes_the_loaded_openblas():
    info = pith.__config__.blas_info()
    assert info["config"] == openblas().openblas_get_config().decode()
    assert info["config"].startswith("OpenBLAS")
    assert info["threading"] == {0: "sequential", 1: "pthreads", 2: "openmp"}[
        openblas().openblas_get_parallel()]


@pytest.mark.skipif(not os.path.isdir(OPENMP_DIR), reason="not Debian's OpenBLAS layout")
def test_pith_loads_the_openmp_build_it_links():
    # Whatever the alternatives system points libopenblas.so.0 at (Note [One OpenBLAS]).
    assert os.path.dirname(os.path.realpath(loaded_openblas_path())) == OPENMP_DIR
    assert pith.__config__.blas_info()["threading"] == "openmp"
    assert "USE_OPENMP" in pith.__config__.blas_info()["config"]


def test_set_num_threads_sets_the_blas_thread_count():
    before = pith.get_num_threads()
    a = pith.ones(256, 256)
    try:
        for n in (1, 2, 1, 3, 2):
            pith.set_num_threads(n)
            assert openblas().openblas_get_num_threads() == n
            assert pith.__config__.blas_info()["num_threads"] == n
            assert (a @ a)[3, 4].item() == 256  # large enough for every thread
            assert openblas().openblas_get_num_threads() == n
    finally:
        pith.set_num_threads(before)


def test_parallel_info_names_the_threads_and_the_blas():
    info = pith.__config__.parallel_info()
    assert f"pith.get_num_threads() : {pith.get_num_threads()}" in info
    assert pith.__config__.blas_info()["config"] in info
    assert "wait policy" in info
    assert "OpenBLAS" in pith.__config__.show()


# ---- fresh processes: PITH_NUM_THREADS, and the threads a product really starts ------------

BLAS_REPORT = """
    import ctypes, json, os
    import pith
    # pith loads OpenBLAS on first use (Note [OpenBLAS is loaded on first use]): blas_info
    # loads the build pith's RUNPATH names; the plain name then finds that one, by SONAME.
    report = {"threading": pith.__config__.blas_info()["threading"],
              "at_start": pith.__config__.blas_info()["num_threads"]}
    lib = ctypes.CDLL("libopenblas.so.0")
    a = pith.rand(300, 300)
    product = a @ a  # large: every thread pith allows
    # (before NumPy, whose own OpenBLAS starts threads when it loads)
    report["tasks_after_product"] = len(os.listdir("/proc/self/task"))
    report["after_product"] = lib.openblas_get_num_threads()
    import numpy as np
    report["product_ok"] = bool(np.allclose(product.numpy(), a.numpy() @ a.numpy(),
                                            rtol=1e-4, atol=1e-4))
    for n in (2, 1, 2):
        pith.set_num_threads(n)
        report[f"after_set_{n}"] = lib.openblas_get_num_threads()
    print(json.dumps(report))
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_pith_num_threads_sets_the_openmp_builds_threads(threads):
    report, _ = run_python(BLAS_REPORT, PITH_NUM_THREADS=str(threads))
    assert report["threading"] == "openmp"
    assert report["at_start"] == threads
    assert report["after_product"] == threads
    assert report["product_ok"]
    # libgomp starts a worker only for a region of more than one thread: with one thread the
    # product ran on the calling thread alone, with two on it and one worker.
    assert report["tasks_after_product"] == threads
    assert (report["after_set_2"], report["after_set_1"]) == (2, 1)


@pytest.mark.parametrize("threads", [1, 2])
def test_pith_num_threads_sets_the_pthread_builds_threads(threads):
    require_pthread_build()
    report, _ = run_python(BLAS_REPORT, PITH_NUM_THREADS=str(threads),
                           LD_LIBRARY_PATH=PTHREAD_DIR)
    assert report["threading"] == "pthreads"
    assert report["at_start"] == threads
    assert report["after_product"] == threads
    assert report["product_ok"]
    assert (report["after_set_2"], report["after_set_1"]) == (2, 1)


def test_every_product_shape_is_right_with_the_pthread_build():
    # The GEMM, GEMV (both forms), dot and parallel-batch paths (Note [Vector products])
    # with another OpenBLAS build under them, at 2 threads.
    require_pthread_build()
    code = """
        import json
        import numpy as np
        import pith
        import pith.nn.functional as F
        rng = np.random.default_rng(1)
        r = lambda *s: rng.standard_normal(s).astype("float32")
        cases = [("x @ w.T", r(1, 300), r(200, 300)), ("x @ w", r(1, 300), r(300, 200)),
                 ("x @ w", r(200, 300), r(300)), ("x @ w", r(300), r(300)),
                 ("x @ w", r(64, 1, 64), r(64, 64, 64)), ("x @ w", r(32, 24, 16), r(32, 16, 24)),
                 ("x @ w", r(300, 300), r(300, 300)), ("x @ w.T", r(4, 64, 256), r(768, 256))]
        bad = []
        for expr, x, w in cases:
            got = eval(expr, {"x": pith.from_numpy(x), "w": pith.from_numpy(w)}).numpy()
            want = eval(expr, {"x": x.astype(np.float64), "w": w.astype(np.float64)})
            if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
                bad.append(f"{expr} {x.shape} {w.shape}")
        print(json.dumps({"threading": pith.__config__.blas_info()["threading"], "bad": bad}))
    """
    report, _ = run_python(code, PITH_NUM_THREADS="2", LD_LIBRARY_PATH=PTHREAD_DIR)
    assert report == {"threading": "pthreads", "bad": []}


# ---- pith.show_config(): the BLAS that was loaded, its threading and threads ---------------

SHOWN_THREADING = {"openmp": "OpenMP", "pthreads": "pthreads", "sequential": "serial"}


def shown_blas(text):
    """The BLAS lines of pith.__config__.show(): {'library', 'threading', 'threads'}."""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.strip().removeprefix("- ").partition(": ")
        if sep and key in ("library", "threading", "threads"):
            fields[key] = value
    return fields


def test_show_config_prints_what_config_show_returns(capsys):
    assert pith.show_config is pith.__config__.show_config
    assert pith.show_config() is None
    assert capsys.readouterr().out == pith.__config__.show()


def test_show_names_the_loaded_blas_its_threading_and_threads():
    info = pith.__config__.blas_info()
    assert info["library"] == os.path.realpath(loaded_openblas_path())
    assert shown_blas(pith.__config__.show()) == {
        "library": info["library"], "threading": SHOWN_THREADING[info["threading"]],
        "threads": f"{info['num_threads']} (pith.get_num_threads(): {pith.get_num_threads()})"}
    assert info["config"] in pith.__config__.show()


SHOW_REPORT = """
    import contextlib, io, json
    import pith
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        pith.show_config()
    print(json.dumps({"shown": pith.__config__.show(), "printed": printed.getvalue(),
                      "library": pith.__config__.blas_info()["library"]}))
"""


@pytest.mark.parametrize("build", ["openmp", "pthread"])
def test_show_config_names_each_openblas_build(build):
    if build == "pthread":
        require_pthread_build()
        directory, env, threading = PTHREAD_DIR, {"LD_LIBRARY_PATH": PTHREAD_DIR}, "pthreads"
    else:
        if not os.path.isdir(OPENMP_DIR):
            pytest.skip("not Debian's OpenBLAS layout")
        directory, env, threading = OPENMP_DIR, {}, "OpenMP"
    report, _ = run_python(SHOW_REPORT, PITH_NUM_THREADS="2", **env)
    assert report["printed"] == report["shown"]
    library = os.path.realpath(os.path.join(directory, "libopenblas.so.0"))
    assert report["library"] == library
    assert shown_blas(report["shown"]) == {
        "library": library, "threading": threading,
        "threads": "2 (pith.get_num_threads(): 2)"}


# ---- the OpenMP wait policy ----------------------------------------------------------------

WAIT_REPORT = """
    import ctypes, json, os, sys
    {before}
    import pith
    info = pith.__config__.parallel_info()
    ctypes.CDLL("libgomp.so.1").omp_display_env(1)  # libgomp's own settings, to stderr
    print(json.dumps({{"policy": [l for l in info.splitlines() if "wait policy" in l][0],
                      "env": {{v: os.environ.get(v) for v in
                              ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}}}}))
"""


def libgomp_spin_count(stderr):
    return next(line.split("=")[1].strip().strip("'") for line in stderr.splitlines()
                if line.strip().startswith("GOMP_SPINCOUNT ="))


def test_pith_gives_libgomp_its_default_and_leaves_the_environment_as_it_was():
    from pith import _openmp_env
    report, stderr = run_python(WAIT_REPORT.format(before=""))
    assert report["env"] == {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": None}
    assert libgomp_spin_count(stderr) == _openmp_env.DEFAULTS["GOMP_SPINCOUNT"]
    assert "pith's default" in report["policy"]


def test_a_wait_policy_in_the_environment_is_left_alone():
    report, stderr = run_python(WAIT_REPORT.format(before=""), GOMP_SPINCOUNT="123456")
    assert report["env"]["GOMP_SPINCOUNT"] == "123456"
    assert libgomp_spin_count(stderr) == "123456"
    assert "GOMP_SPINCOUNT=123456 (the environment)" in report["policy"]
    report, stderr = run_python(WAIT_REPORT.format(before=""), OMP_WAIT_POLICY="ACTIVE")
    assert report["env"] == {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": None}
    assert int(libgomp_spin_count(stderr)) > 300000  # ACTIVE spins (for minutes)


def test_libgomp_loaded_before_pith_keeps_its_own_defaults():
    report, stderr = run_python(WAIT_REPORT.format(before='ctypes.CDLL("libgomp.so.1")'))
    assert libgomp_spin_count(stderr) == "300000"  # libgomp's own default
    assert "libgomp was loaded before pith" in report["policy"]
