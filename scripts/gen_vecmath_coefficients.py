"""Computes the polynomial coefficients of the vectorised math functions
(kernels/vecmath_impl.h) and writes kernels/vecmath_coefficients.h.

    python3 scripts/gen_vecmath_coefficients.py [--check]

Each polynomial is a weighted minimax fit (the Remez exchange algorithm, in mpmath at 80
digits) of the part of a function that the kernel does not compute exactly, with the weight
that turns the polynomial's error into the relative error of the function's result. The
coefficients are then rounded to the kernel's precision (float or double) and the error of
the rounded polynomial is measured again and printed into the header beside it. See Note
[Vectorised math functions] (kernels/vecmath.h) for how the kernels use them, and
scripts/check_vecmath_ulp.c for the measured error of the whole functions.

--check regenerates in memory and fails if the committed header differs (it takes a minute
or two: the degree-25 erfcx fit dominates). Needs mpmath (PyTorch's sympy brings it).
"""
import argparse
import os
import struct
import sys

import mpmath as mp

mp.mp.dps = 80
HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "..", "kernels", "vecmath_coefficients.h")
TINY = mp.mpf("1e-14")  # stands for 0 where a fit's function has a removable singularity


def remez(g, w, a, b, powers, iters=40, grid=400):
    """Coefficients c (for the monomials v**powers[j]) minimising max |w(v) (g(v) - p(v))|
    on [a, b], and that maximum."""
    n = len(powers)
    a, b = mp.mpf(a), mp.mpf(b)
    ref = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * i / n) for i in range(n + 1)]
    pts = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * i / (grid - 1)) for i in range(grid)]
    gp = [g(v) for v in pts]
    wp = [w(v) for v in pts]
    c = None
    for _ in range(iters):
        A = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for i, v in enumerate(ref):
            for j, p in enumerate(powers):
                A[i, j] = v ** p
            A[i, n] = (-1) ** i / w(v)
            rhs[i] = g(v)
        sol = mp.lu_solve(A, rhs)
        c = [sol[j] for j in range(n)]
        level = abs(sol[n])

        def err(v, gv, wv):
            return wv * (gv - sum(cj * v ** p for cj, p in zip(c, powers)))

        ev = [err(v, gv, wv) for v, gv, wv in zip(pts, gp, wp)]
        # The largest error of each run of one sign, then n + 1 of them.
        ext, cur = [], None
        for i, e in enumerate(ev):
            if cur is None or (e >= 0) != cur[0]:
                if cur is not None:
                    ext.append(cur[1])
                cur = [e >= 0, i]
            elif abs(e) > abs(ev[cur[1]]):
                cur[1] = i
        ext.append(cur[1])
        while len(ext) > n + 1:
            ext.pop(0 if abs(ev[ext[0]]) < abs(ev[ext[-1]]) else -1)
        worst = max(abs(e) for e in ev)
        if len(ext) < n + 1 or abs(worst / level - 1) < mp.mpf("1e-8"):
            break
        ref = []
        for i in ext:  # each extremum refined by a golden-section search
            lo, hi = pts[max(i - 1, 0)], pts[min(i + 1, grid - 1)]
            for _ in range(30):
                m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
                if abs(err(m1, g(m1), w(m1))) > abs(err(m2, g(m2), w(m2))):
                    hi = m2
                else:
                    lo = m1
            ref.append((lo + hi) / 2)
    return c


def rounded(x, digits):
    """x rounded to the nearest float (24 digits) or double (53)."""
    with mp.workprec(digits):
        return +mp.mpf(x)


def c_literal(x, digits):
    """A C hex literal of x (already rounded to `digits`), without trailing zero digits."""
    if digits == 24:
        x = struct.unpack("f", struct.pack("f", float(x)))[0]
    mantissa, exponent = float.hex(float(x)).split("p")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}p{exponent}" + ("f" if digits == 24 else "")


def measured_error(g, w, a, b, powers, coefficients, grid=2000):
    a, b = mp.mpf(a), mp.mpf(b)
    worst = 0
    for i in range(grid):
        v = a + (b - a) * i / (grid - 1)
        p = sum(cj * v ** pw for cj, pw in zip(coefficients, powers))
        worst = max(worst, abs(w(v) * (g(v) - p)))
    return worst


L = lambda s: mp.log((1 + s) / (1 - s))  # log(1 + f) in terms of s = f / (2 + f)
SMAX = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1) * mp.mpf("1.001")
EXP_R = mp.log(2) / 2 * mp.mpf("1.002")
TANH_T = mp.mpf("0.625")
ERF_T = mp.mpf("0.84375")
TRIG_R = mp.pi / 4 * mp.mpf("1.0001")


def erfcx_over_t(t):
    """erfc(z) exp(z^2) / t for t = 1 / (1 + z/2)."""
    z = 2 * (1 / t - 1)
    return mp.erfc(z) * mp.exp(z * z) / t


def erfcx_fit(zmax):
    ta, tb = 1 / (1 + mp.mpf(zmax) / 2), mp.mpf(1)
    centre = rounded((ta + tb) / 2, 24)
    return centre, (lambda u: erfcx_over_t(u + centre)), ta - centre, tb - centre


# name, digits, what it is, g, w, a, b, powers
def fits():
    sq = mp.sqrt
    tail32 = erfcx_fit("10.1")
    tail64 = erfcx_fit("27.3")
    rows = []
    for digits, suffix, exp_deg, log_deg, tanh_deg, erf_deg in (
            (24, "F", 6, 3, 5, 5), (53, "D", 11, 7, 11, 10)):
        rows += [
            ("EXP_" + suffix, digits,
             "exp(r) = 1 + r + sum c[j] r^(j+2), |r| <= ln(2)/2; relative error",
             lambda r: mp.exp(r) - 1 - r, lambda r: 1 / mp.exp(r), -EXP_R, EXP_R,
             list(range(2, exp_deg + 1))),
            ("LOG_" + suffix, digits,
             "log(1+f) = f - f^2/2 + s (f^2/2 + sum c[j] z^(j+1)), s = f/(2+f), z = s^2, "
             "|s| <= 3-2*sqrt(2); relative error",
             lambda z: (L(sq(z)) - 2 * sq(z)) / sq(z), lambda z: sq(z) / L(sq(z)), TINY,
             SMAX ** 2, list(range(1, log_deg + 1))),
            ("TANH_" + suffix, digits,
             "tanh(x) = x + x sum c[j] z^(j+1), z = x^2, |x| <= 0.625; relative error",
             lambda z: (mp.tanh(sq(z)) - sq(z)) / sq(z), lambda z: sq(z) / mp.tanh(sq(z)),
             TINY, TANH_T ** 2, list(range(1, tanh_deg + 1))),
            ("ERF_" + suffix, digits,
             "erf(x) = x sum c[j] z^j, z = x^2, |x| <= 0.84375; relative error",
             lambda z: mp.erf(sq(z)) / sq(z), lambda z: sq(z) / mp.erf(sq(z)), TINY,
             ERF_T ** 2, list(range(0, erf_deg + 1))),
        ]
    rows.append(("GELU_H_F", 24,
                 "gelu: Phi(-a) exp(a^2/2) = sum c[j] u^j, u = a - 3/2, 0 <= a <= 3; relative "
                 "error",
                 lambda u: mp.ncdf(-(u + 1.5)) * mp.exp((u + 1.5) ** 2 / 2),
                 lambda u: 1 / (mp.ncdf(-(u + 1.5)) * mp.exp((u + 1.5) ** 2 / 2)),
                 -mp.mpf(1.5), mp.mpf(1.5), list(range(0, 14))))
    for digits, suffix, (centre, g, a, b), degree in ((24, "F", tail32, 10),
                                                    (53, "D", tail64, 25)):
        rows.append(("ERFCX_" + suffix, digits,
                     "erfc(z) exp(z^2) = t sum c[j] u^j, t = 1/(1+z/2), u = t - "
                     f"{c_literal(centre, 24)}, 0 <= z <= {'10.1' if digits == 24 else '27.3'}; "
                     "relative error",
                     g, lambda u, g=g: 1 / g(u), a, b, list(range(0, degree + 1))))
    for digits, suffix, (centre, g, a, b) in ((24, "F", tail32), (53, "D", tail64)):
        # d ln(t Q(t)) / d ln t: how t's relative error moves erfcx (See erfcx_f).
        slope = (lambda g, centre: lambda u: 1 + (u + centre) * mp.diff(g, u) / g(u))(g, centre)
        rows.append(("ERFCX_SLOPE_" + suffix, digits,
                     "d ln(erfcx) / d ln t over ERFCX_" + suffix + "'s interval, for the "
                     "correction of t's rounding; relative error",
                     slope, lambda u, s=slope: 1 / abs(s(u)), a, b, list(range(0, 4))))
    rows += [
        ("SIN_F", 53,
         "float's sin in double: sin(r) = r + r sum c[j] z^(j+1), z = r^2, |r| <= pi/4; "
         "relative error",
         lambda z: (mp.sin(sq(z)) - sq(z)) / sq(z), lambda z: sq(z) / mp.sin(sq(z)), TINY,
         TRIG_R ** 2, list(range(1, 5))),
        ("COS_F", 53,
         "float's cos in double: cos(r) = 1 - z/2 + sum c[j] z^(j+2), z = r^2, |r| <= pi/4; "
         "relative error",
         lambda z: mp.cos(sq(z)) - 1 + z / 2, lambda z: 1 / mp.cos(sq(z)), TINY, TRIG_R ** 2,
         list(range(2, 5))),
        ("SIN_D", 53,
         "sin(r) = r + r sum c[j] z^(j+1), z = r^2, |r| <= pi/4; relative error",
         lambda z: (mp.sin(sq(z)) - sq(z)) / sq(z), lambda z: sq(z) / mp.sin(sq(z)), TINY,
         TRIG_R ** 2, list(range(1, 7))),
        ("COS_D", 53,
         "cos(r) = 1 - z/2 + sum c[j] z^(j+2), z = r^2, |r| <= pi/4; relative error",
         lambda z: mp.cos(sq(z)) - 1 + z / 2, lambda z: 1 / mp.cos(sq(z)), TINY, TRIG_R ** 2,
         list(range(2, 8))),
        ("POW_LOG2_F", 53,
         "float's pow, in double: log2(1+f) = s (2/ln 2 + sum c[j] z^(j+1)), s = f/(2+f), "
         "z = s^2; relative error",
         lambda z: (L(sq(z)) - 2 * sq(z)) / sq(z) / mp.log(2),
         lambda z: sq(z) / L(sq(z)) * mp.log(2), TINY, SMAX ** 2, list(range(1, 5))),
        ("POW_EXP2_F", 53,
         "float's pow, in double: 2^r = 1 + sum c[j] r^(j+1), |r| <= 1/2; relative error",
         lambda r: 2 ** r - 1, lambda r: 1 / 2 ** r, -mp.mpf("0.501"), mp.mpf("0.501"),
         list(range(1, 8))),
        ("POW_LOG_D", 53,
         "pow's log: log(1+f) = 2s + 2s^3/3 + s sum c[j] z^(j+2), s = f/(2+f), z = s^2; "
         "relative error",
         lambda z: (L(sq(z)) - 2 * sq(z) - 2 * sq(z) ** 3 / 3) / sq(z),
         lambda z: sq(z) / L(sq(z)), TINY, SMAX ** 2, list(range(2, 9))),
    ]
    centres = {"ERFCX_F": tail32[0], "ERFCX_D": tail64[0]}
    return rows, centres


def split(value, bits, parts):
    """value as `parts` numbers, each but the last rounded to `bits` digits, the last to
    53: their sum is value to about (parts - 1) * bits + 53 digits."""
    out = []
    for i in range(parts):
        digits = bits if i < parts - 1 else 53
        out.append(rounded(value - sum(out), digits))
    return out


def constants():
    """(name, digits, value). The exact values: ln 2, pi/2, ...; see each kernel."""
    ln2, pio2 = mp.log(2), mp.pi / 2
    rows = []
    # exp and log, float: the exponent is at most ~180 (8 bits), so 16 digits of ln 2.
    hi = rounded(ln2, 16)
    rows += [("LN2_HI_F", 24, hi), ("LN2_LO_F", 24, ln2 - hi), ("LOG2E_F", 24, 1 / ln2)]
    # double: the exponent is at most ~1160 (11 bits), so 42 digits.
    hi = rounded(ln2, 42)
    rows += [("LN2_HI_D", 53, hi), ("LN2_LO_D", 53, ln2 - hi), ("LOG2E_D", 53, 1 / ln2)]
    # sin/cos of a float, reduced in double: |n| < 2^20, so 33 digits, then the rest.
    for i, part in enumerate(split(pio2, 33, 2)):
        rows.append((f"PIO2_F_{i + 1}", 53, part))
    # sin/cos of a double: three 33-digit parts and a last one (152 digits of pi/2).
    for i, part in enumerate(split(pio2, 33, 4)):
        rows.append((f"PIO2_D_{i + 1}", 53, part))
    rows.append(("TWO_OVER_PI_D", 53, 1 / pio2))
    rows.append(("TWO_LOG2E_D", 53, 2 / ln2))
    r = 1 / mp.sqrt(2)
    rows += [("SQRT1_2_F", 24, r), ("SQRT1_2_LO_F", 24, r - rounded(r, 24)),
             ("SQRT1_2_D", 53, r), ("SQRT1_2_LO_D", 53, r - rounded(r, 53))]
    # gelu's tanh form: tanh(u) with u = sqrt(2/pi) (x + 0.044715 x^3), computed as the
    # sigmoid of 2u = x (A + B x^2); double-double parts for float64.
    a = 2 * mp.sqrt(2 / mp.pi)
    b = a * mp.mpf("0.044715")
    rows += [("GELU_TANH_A_D", 53, a), ("GELU_TANH_A_LO_D", 53, a - rounded(a, 53)),
             ("GELU_TANH_B_D", 53, b), ("GELU_TANH_B_LO_D", 53, b - rounded(b, 53))]
    rows += [("TWO_THIRDS_D", 53, mp.mpf(2) / 3),
             ("TWO_THIRDS_LO_D", 53, mp.mpf(2) / 3 - rounded(mp.mpf(2) / 3, 53))]
    return rows


GELU_T_PIECES, GELU_T_DEGREE, GELU_T_LANES = 12, 5, 16


def gelu_table():
    """gelu's narrow path on the tables with a lane permute (gelu_narrow_f): Phi(-a) for
    0 <= a <= 3 as 12 pieces, a in [i/4, (i+1)/4], each a degree-5 polynomial in u = 4a - i
    in [0, 1], fitted for relative error; row j of the table holds c[j] of every piece,
    padded with zeros to 16 lanes (one AVX-512 register, two AVX2 ones)."""
    powers = list(range(GELU_T_DEGREE + 1))
    rows = [[0] * GELU_T_LANES for _ in powers]
    worst = 0
    for i in range(GELU_T_PIECES):
        g = lambda u, i=i: mp.ncdf(-(i + u) / 4)
        w = lambda u, g=g: 1 / g(u)
        c = [rounded(x, 24) for x in remez(g, w, 0, 1, powers)]
        worst = max(worst, measured_error(g, w, 0, 1, powers, c))
        for j in powers:
            rows[j][i] = c[j]
    print("GELU_T_F", mp.nstr(worst * 2 ** 24, 3), file=sys.stderr)
    body = ", \\\n    ".join("{" + ", ".join(c_literal(x, 24) if x else "0.0f" for x in row) + "}"
                          for row in rows)
    return [f"/* gelu, |x| <= 3: Phi(-a) = sum c[j] u^j, u = 4a - i on a in [i/4, (i+1)/4], "
            f"i = 0..{GELU_T_PIECES - 1}; row j",
            f" * holds c[j] of every i, padded with zeros to {GELU_T_LANES}; relative error. "
            f"Error: {mp.nstr(worst * 2 ** 24, 2)} x 2^-24 */",
            f"#define VM_GELU_T_F_PIECES {GELU_T_PIECES}",
            f"#define VM_GELU_T_F_DEGREE {GELU_T_DEGREE}",
            f"#define VM_GELU_T_F {{ \\\n    {body}}}"]


def generate():
    rows, centres = fits()
    out = ["/* vecmath_coefficients.h — GENERATED by scripts/gen_vecmath_coefficients.py; do not",
           " * edit. Minimax coefficients of the vectorised math functions (kernels/vecmath_impl.h),",
           " * lowest power first, each with the fit's error after rounding the coefficients. */",
           "#ifndef PITH_KERNELS_VECMATH_COEFFICIENTS_H",
           "#define PITH_KERNELS_VECMATH_COEFFICIENTS_H", ""]
    remez_exact = {}
    for name, digits, what, g, w, a, b, powers in rows:
        exact = remez(g, w, a, b, powers)
        remez_exact[name] = exact[0]
        c = [rounded(x, digits) for x in exact]
        error = measured_error(g, w, a, b, powers, c)
        bits = 24 if digits == 24 or name.endswith("_F") else 53  # the result's precision
        ulp = mp.mpf(2) ** -bits
        if "SLOPE" in name:  # a correction term: its relative error matters, not ulps
            ulp, note = 1, ""
        else:
            note = f" x 2^-{bits}"
        out.append(f"/* {what}. Error: {mp.nstr(error / ulp, 2)}{note} */")
        out.append(f"#define VM_{name}_COUNT {len(c)}")
        body = ", ".join(c_literal(x, digits) for x in c)
        out.append(f"#define VM_{name} {{{body}}}")
        if name.startswith("ERF_"):
            # The constant term matters alone as x -> 0: its rounding error is given too.
            exact = remez_exact[name]
            out.append(f"#define VM_{name}_C0_LO {c_literal(rounded(exact - c[0], digits), digits)}")
        print(name, mp.nstr(error / ulp, 3), file=sys.stderr)
    out += gelu_table()
    out.append("")
    out.append("/* Constants split into parts: a _HI part has few enough digits that its product with")
    out.append(" * the integers it multiplies is exact; _LO (and further parts) hold the rest. */")
    for name, digits, value in constants():
        out.append(f"#define VM_{name} {c_literal(rounded(value, digits), digits)}")
    for name, centre in centres.items():
        out.append(f"#define VM_{name}_CENTRE {c_literal(centre, 24 if name.endswith('F') else 53)}")
    out += ["", "#endif /* PITH_KERNELS_VECMATH_COEFFICIENTS_H */", ""]
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = generate()
    if args.check:
        with open(HEADER) as f:
            if f.read() != text:
                sys.exit("vecmath_coefficients.h is stale: run scripts/gen_vecmath_coefficients.py")
        return
    with open(HEADER, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
