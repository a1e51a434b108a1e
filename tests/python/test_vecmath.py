"""The vectorised math functions behind exp, log, log1p, tanh, sigmoid, silu, gelu, erf, sin,
cos, sqrt, rsqrt and pow (Note [Vectorised math functions], kernels/vecmath.h), against
PyTorch: values, special values, the documented differences, pow by a Python scalar bit for
bit, each instruction set chosen by PITH_CPU_CAPABILITY in a subprocess, and bits that do not
depend on where an array is cut. Their error bounds in ulps are pinned by
tests/kernels/vecmath_test.cc and scripts/check_vecmath_ulp.c."""
import json
import math
import os
import subprocess
import sys

import tomllib

import numpy as np
import pytest

import pith
import pith.nn.functional as PF

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def _vectorised_unary_ops():
    """The op file's unary ops with a vectorised math function (ops/ops.toml, `vecmath`), as
    {name: (pith's function, PyTorch's)}, and those whose inputs are positive (`test.range`)."""
    with open(os.path.join(REPO, "ops", "ops.toml"), "rb") as f:
        records = tomllib.load(f)["op"]
    ops, positive = {}, set()
    for name, rec in records.items():
        if rec.get("family") != "unary" or name not in rec.get("vecmath", {}):
            continue
        ops[name] = (getattr(pith, name, None) or getattr(PF, name),
                     getattr(torch, name, None) or getattr(TF, name))
        if rec["test"].get("range", [-1])[0] >= 0:
            positive.add(name)
    return ops, positive


OPS, POSITIVE = _vectorised_unary_ops()
OPS.update({
    "gelu": (PF.gelu, TF.gelu),
    "gelu_tanh": (lambda x: PF.gelu(x, approximate="tanh"),
                  lambda x: TF.gelu(x, approximate="tanh")),
})
# Relative tolerance against PyTorch, per dtype: both libraries are within a few ulps.
RTOL = {"float32": 4e-6, "float64": 1e-14, "float16": 2e-3, "bfloat16": 1.6e-2}
NP_DTYPES = {"float32": np.float32, "float64": np.float64}


def inputs(name, dtype, n=4099, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 4
    if name in POSITIVE:
        x = np.abs(x) * 10 + 1e-3
    return x


def to_pith(x, dtype):
    return pith.from_numpy(np.asarray(x, dtype=np.float64)).to(getattr(pith, dtype))


def to_torch(x, dtype):
    return torch.from_numpy(np.asarray(x, dtype=np.float64)).to(getattr(torch, dtype))


def values(t):
    """A float64 NumPy array of a pith or torch tensor (exact for every float dtype)."""
    if isinstance(t, torch.Tensor):
        return t.double().numpy()
    return t.double().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_op_matches_torch(name, dtype):
    x = inputs(name, dtype)
    ours, theirs = OPS[name]
    got = ours(to_pith(x, dtype))
    want = theirs(to_torch(x, dtype))
    assert str(got.dtype) == str(want.dtype).replace("torch", "pith")
    # atol: PyTorch's float32 erf is good to ~1.5e-7 absolute (Abramowitz and Stegun's
    # 7.1.26), so its gelu to ~1e-6 (test_gelu_is_closer_to_the_exact_value_than_torch); its
    # float64 gelu forms lose digits to 1 + erf(x) and 1 + tanh(u) for x < 0.
    atol = {"float32": 1e-6 if name == "gelu" else 3e-7,
            "float64": 1e-15 if name.startswith("gelu") else 1e-300}.get(dtype, 1e-3)
    np.testing.assert_allclose(values(got), values(want), rtol=RTOL[dtype], atol=atol)


def test_gelu_is_closer_to_the_exact_value_than_torch():
    x = inputs("gelu", "float32", n=20000).astype(np.float32)
    exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
    ours = PF.gelu(pith.from_numpy(x)).double().numpy()
    theirs = TF.gelu(torch.from_numpy(x)).double().numpy()
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    ours_ulps, theirs_ulps = np.abs(ours - exact) / ulp, np.abs(theirs - exact) / ulp
    assert ours_ulps.max() <= 4.5  # inside gelu's float32 bound (the op file's vecmath keys)
    assert theirs_ulps.max() > 100 * ours_ulps.max()


SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-40, -1e-40, 1e-310, -1e-310, 1.0,
           -1.0, 80.0, -80.0, 88.8, -87.0, 20.0, -20.0, 700.0, -700.0, 1e6, -1e6, 1e30, -1e30,
           3.4e38, -3.4e38]

# Where pith's result differs from PyTorch's, because PyTorch's formula loses the answer
# (docs/python.md, "Differences from PyTorch"): {(op, dtype): {x: pith's value}}.
DIFFERENCES = {
    # exp(-x) overflows in PyTorch's 1 / (1 + exp(-x)): the true value is denormal or tiny.
    ("sigmoid", "float32"): {-88.8: 2.7205e-39},
    ("silu", "float32"): {-88.8: -2.4158e-37},
    # PyTorch's vectorised float32 erf gives NaN at inf, and 0.5 x (1 + erf) overflows at
    # 3.4e38; gelu(x) is x there (float64 PyTorch agrees).
    ("gelu", "float32"): {math.inf: math.inf, 3.4e38: 3.4e38},
    # (that NaN and that overflow are its AVX-512 path; its AVX2 path agrees with pith)
    # 1 + erf(x) cancels to 0 in PyTorch's formula.
    ("gelu", "float64"): {-20.0: -5.507248237212468e-88},
    ("gelu_tanh", "float64"): {-20.0: -3.3754509563109673e-261},
}


# Differences that only some of PyTorch's CPU paths have: PyTorch may agree with pith there.
AGREES_ON_SOME_CPUS = {("gelu", "float32", math.inf),
                       ("gelu", "float32", float(np.float32(3.4e38)))}
# A zero gelu (x = -0, or x < 0 underflowing) has the sign of x (x Phi(x)) in pith and in
# PyTorch's AVX-512 path, and is +0 in its AVX2 path.
ZERO_SIGN_ON_SOME_CPUS = {("gelu", "float32")}


def same_value(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == 0 or b == 0 or math.isinf(a) or math.isinf(b):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return abs(a - b) <= 1e-6 * abs(b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_special_values_match_torch_except_the_documented_differences(name, dtype):
    x = np.array(SPECIAL, dtype=NP_DTYPES[dtype])
    ours, theirs = OPS[name]
    got = ours(pith.from_numpy(x)).double().numpy()
    want = theirs(torch.from_numpy(x)).double().numpy()
    known = {float(NP_DTYPES[dtype](k)): v for k, v in DIFFERENCES.get((name, dtype), {}).items()}
    for xi, g, w in zip(x.tolist(), got.tolist(), want.tolist()):
        if xi in known:
            assert same_value(g, known[xi]), f"{name}({xi}) = {g}, not {known[xi]}"
            if (name, dtype, xi) not in AGREES_ON_SOME_CPUS:
                assert not same_value(w, g), f"{name}({xi}): PyTorch now agrees; drop the entry"
        elif (name, dtype) in ZERO_SIGN_ON_SOME_CPUS and g == 0 and w == 0:
            assert math.copysign(1, g) == math.copysign(1, xi), f"{name}({xi}) = {g}"
        else:
            assert same_value(g, w), f"{name}({xi}) = {g}, PyTorch gives {w}"


def test_small_results_are_denormals_not_zeros():
    x = pith.tensor([-90.0, -100.0])
    assert PF.silu(x).tolist() == pytest.approx([-90 * math.exp(-90), -100 * math.exp(-100)],
                                                rel=1e-2, abs=0)
    assert pith.sigmoid(x).tolist()[0] == pytest.approx(math.exp(-90), rel=1e-5)
    assert pith.exp(pith.tensor([-100.0])).tolist()[0] == pytest.approx(math.exp(-100),
                                                                        rel=1e-2)


# ---- erf, the new op ----

def test_erf_has_every_form():
    x = pith.tensor([-1.5, 0.0, 0.25, 3.0])
    want = [math.erf(v) for v in x.tolist()]
    assert pith.erf(x).tolist() == pytest.approx(want, rel=1e-6)
    assert x.erf().tolist() == pytest.approx(want, rel=1e-6)
    out = pith.empty(4)
    assert pith.erf(x, out=out) is out
    assert out.tolist() == pytest.approx(want, rel=1e-6)
    y = x.clone()
    assert y.erf_() is y
    assert y.tolist() == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("values", [[1, 2, -3], [True, False]])
def test_erf_of_integers_and_bool_is_float32(values):
    got = pith.erf(pith.tensor(values))
    want = torch.erf(torch.tensor(values))
    assert got.dtype == pith.float32 and want.dtype == torch.float32
    assert got.tolist() == pytest.approx(want.tolist(), rel=1e-6)


def test_erf_in_place_on_an_integer_tensor_is_an_error_as_for_exp():
    for op in ("erf_", "exp_"):
        with pytest.raises(TypeError, match="float32"):
            getattr(pith.tensor([1, 2]), op)()


# ---- pow by a Python scalar (Note [Pow with a scalar exponent]) ----

POW_INPUTS = [0.0, -0.0, 1.5, -1.5, 3.0, -7.25, math.inf, -math.inf, math.nan, 1e-30, -1e-30,
              1e20, -1e20, 0.1, -0.1, 65504.0, 1e-40]


def pow_inputs():
    rng = np.random.default_rng(3)
    return np.concatenate([np.array(POW_INPUTS), rng.standard_normal(2000) * 5])


def assert_same_bits(got, want, what):
    got, want = values(got), values(want)
    nan = np.isnan(got) & np.isnan(want)
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    bad = np.flatnonzero(~(nan | same))
    assert bad.size == 0, f"{what}: {got[bad[:5]]} vs PyTorch's {want[bad[:5]]}"


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("exponent", [0, 1, 2, 3, -1, -2, 2.0, 3.0, 0.0, True])
def test_pow_by_a_small_scalar_is_pytorchs_bit_for_bit(exponent, dtype):
    x = pow_inputs()
    assert_same_bits(to_pith(x, dtype) ** exponent, to_torch(x, dtype) ** exponent,
                     f"{dtype} ** {exponent!r}")
    assert_same_bits(to_pith(x, dtype).pow(exponent), to_torch(x, dtype).pow(exponent),
                     f"{dtype}.pow({exponent!r})")


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("exponent, op", [(0.5, "sqrt"), (-0.5, "rsqrt")])
def test_pow_by_a_half_is_sqrt_or_rsqrt(exponent, op, dtype):
    """As in PyTorch (so (-0.0) ** 0.5 is -0.0); PyTorch's own float32 sqrt and bfloat16
    rsqrt are not always correctly rounded, pith's are (float32's sqrt instruction)."""
    x = pow_inputs()
    assert_same_bits(to_pith(x, dtype) ** exponent, getattr(pith, op)(to_pith(x, dtype)),
                     f"{dtype} ** {exponent}")
    np.testing.assert_allclose(values(to_pith(x, dtype) ** exponent),
                               values(to_torch(x, dtype) ** exponent), rtol=RTOL[dtype])


@pytest.mark.parametrize("exponent", [0, 1])
def test_float16_pow_by_zero_and_one_is_pytorchs_bit_for_bit(exponent):
    x = pow_inputs()
    assert_same_bits(to_pith(x, "float16") ** exponent, to_torch(x, "float16") ** exponent,
                     f"float16 ** {exponent}")


@pytest.mark.parametrize("exponent", [2, 3, -2, 0.5, 2.5, -1.25])
def test_float16_pow_is_pow_rounded_once(exponent):
    """PyTorch's Half kernel takes pow for every exponent but 0 and 1 (its own is a few half
    ulps off); pith's is float32's pow rounded once."""
    x = pow_inputs()
    got = to_pith(x, "float16") ** exponent
    want = (to_pith(x, "float16").float() ** pith.tensor(float(exponent))).half()
    assert_same_bits(got, want, f"float16 ** {exponent}")
    np.testing.assert_allclose(values(got), values(to_torch(x, "float16") ** exponent),
                               rtol=2e-3, atol=1e-7)


def test_pow_by_a_zero_dim_tensor_is_pow_not_sqrt():
    """A 0-dim tensor exponent takes pow (pow.Tensor_Tensor): (-0.0) ** 0.5 is +0.0, while
    ** 0.5 (a Python number) is sqrt's -0.0, as in PyTorch."""
    x = pith.tensor([-0.0, 4.0])
    assert math.copysign(1, (x ** pith.tensor(0.5)).tolist()[0]) == 1.0
    assert math.copysign(1, (x ** 0.5).tolist()[0]) == -1.0
    t = torch.tensor([-0.0, 4.0])
    assert math.copysign(1, (t ** torch.tensor(0.5)).tolist()[0]) == 1.0
    assert math.copysign(1, (t ** 0.5).tolist()[0]) == -1.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_of_tensors_matches_torch(dtype):
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.standard_normal(3000) * 8, POW_INPUTS])
    y = np.concatenate([rng.standard_normal(3000) * 3, np.round(rng.standard_normal(
        len(POW_INPUTS)) * 3)])
    got = pith.pow(to_pith(x, dtype), to_pith(y, dtype))
    want = torch.pow(to_torch(x, dtype), to_torch(y, dtype))
    np.testing.assert_allclose(values(got), values(want), rtol=RTOL[dtype], atol=0)


def test_integer_pow_keeps_integers():
    assert (pith.tensor([2, -3]) ** 3).tolist() == [8, -27]
    assert (pith.tensor([2, 3]) ** 0.5).dtype == pith.float32
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        pith.tensor([2, 3]) ** -1


# ---- the instruction set (Note [CPU capability]) ----

SCRIPT = r"""
import hashlib, json, sys
import numpy as np
import pith
import pith.nn.functional as F
rng = np.random.default_rng(1)
x = pith.from_numpy(rng.standard_normal(5003).astype(np.float32) * 6)
xp = pith.abs(x) + 0.01
d = x.double()
ops = {"exp": pith.exp(x), "log": pith.log(xp), "log1p": pith.log1p(xp),
       "sqrt": pith.sqrt(xp), "rsqrt": pith.rsqrt(xp), "sin": pith.sin(x), "cos": pith.cos(x),
       "tanh": pith.tanh(x), "sigmoid": pith.sigmoid(x), "silu": F.silu(x),
       "erf": pith.erf(x), "gelu": F.gelu(x), "gelu_tanh": F.gelu(x, approximate="tanh"),
       "pow": pith.pow(xp, x), "exp64": pith.exp(d), "gelu64": F.gelu(d),
       "pow64": pith.pow(d.abs(), d)}
print(json.dumps({"capability": pith.backends.cpu.get_cpu_capability(),
                  "bits": {k: hashlib.sha256(v.numpy().tobytes()).hexdigest()
                           for k, v in ops.items()},
                  "values": {k: v.double().numpy().tolist()[:200] for k, v in ops.items()}}))
"""
NAMES = {"sse2": "DEFAULT", "avx2": "AVX2", "avx512": "AVX512"}
LEVELS = ["sse2", "avx2", "avx512"]


def run_with(capability):
    env = dict(os.environ)
    env.pop("PITH_CPU_CAPABILITY", None)
    if capability is not None:
        env["PITH_CPU_CAPABILITY"] = capability
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


@pytest.fixture(scope="module")
def by_capability():
    best, _ = run_with(None)
    runs = {}
    for level in LEVELS:
        runs[level] = run_with(level)
    return best, runs


def best_level(best):
    return [lv for lv in LEVELS if NAMES[lv] == best["capability"]][0]


def test_the_default_is_the_best_the_cpu_has(by_capability):
    best, runs = by_capability
    assert best["capability"] in NAMES.values()
    assert runs[best_level(best)][0]["bits"] == best["bits"]


def test_each_capability_is_honoured_or_clamped_with_a_message(by_capability):
    best, runs = by_capability
    top = best_level(best)
    for level, (run, stderr) in runs.items():
        if LEVELS.index(level) <= LEVELS.index(top):
            assert run["capability"] == NAMES[level]
            assert "PITH_CPU_CAPABILITY" not in stderr
        else:  # this CPU lacks it: the best it has, said once on stderr
            assert run["capability"] == best["capability"]
            assert f"supports {top} at most" in stderr


def test_every_capability_computes_the_same_values(by_capability):
    _, runs = by_capability
    reference = runs["sse2"][0]["values"]
    for level, (run, _) in runs.items():
        for op, vals in run["values"].items():
            np.testing.assert_allclose(vals, reference[op], rtol=2e-6, atol=1e-30,
                                       err_msg=f"{op} on {level}")


def test_avx2_and_avx512_give_the_same_bits(by_capability):
    """Both fuse the same multiply-adds (the SSE2 table has no FMA)."""
    _, runs = by_capability
    if runs["avx512"][0]["capability"] != "AVX512":
        pytest.skip("this CPU has no AVX-512")
    assert runs["avx2"][0]["bits"] == runs["avx512"][0]["bits"]


def test_an_unknown_capability_is_ignored_with_a_message():
    run, stderr = run_with("neon")
    best, _ = run_with(None)
    assert run["capability"] == best["capability"]
    assert "PITH_CPU_CAPABILITY=neon is not one of sse2, avx2, avx512" in stderr


# ---- identical bits wherever an array is cut (Note [Vectorised math functions]) ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_where_an_array_is_cut_changes_no_bits(name, dtype):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(40011) * 6
    x[::97] = np.array(SPECIAL)[np.arange(x[::97].size) % len(SPECIAL)]
    t = to_pith(x, dtype)
    op = OPS[name][0]
    whole = op(t).numpy()
    for start in (1, 3, 5, 17, 33):
        assert np.array_equal(op(t[start:]).numpy(), whole[start:], equal_nan=True), start
    assert np.array_equal(op(t[2::3]).numpy(), whole[2::3], equal_nan=True)
    threads = pith.get_num_threads()
    try:
        for n in (1, 2):
            pith.set_num_threads(n)
            assert np.array_equal(op(t).numpy(), whole, equal_nan=True), n
    finally:
        pith.set_num_threads(threads)
