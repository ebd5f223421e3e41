"""float64 and complex128 elementwise ops under jit, against eager irax (NumPy) and JAX, with x64 enabled.

IREE compiles many float64 functions to libm calls it cannot link, or approximates them loosely; the
lowering expands them in StableHLO (passes/f64_math.py). x64 is process-global, so every check runs in
one child process with JAX_ENABLE_X64=1 (this file run as a script), which prints a JSON report with
one entry per op and dtype, once per run (conftest.py's ``shared``); each test reads its entry. The ops are
batched into two jitted functions.

Inputs span each op's whole domain (magnitudes 1e-300 to 1e300, arguments near multiples of pi/2) plus
NaN, -NaN, +-inf, +-0 and subnormals. IREE's CPU code, like XLA's, runs with denormals flushed to zero:
subnormal inputs are left out of the comparisons (except for rem and cbrt, which read them exactly), and
subnormal expected results accept zero.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

TINY = np.finfo(np.float64).tiny
EPS = np.finfo(np.float64).eps

# name -> (input domain, tolerance vs eager): ulps of the expected value, or ("rel", r) for
# |err| <= r * max(1, |want|). Eager digamma (an asymptotic series) is good to ~1e-11 only.
REAL_UNARY = {
    "sin": ("any", 2), "cos": ("any", 2), "tan": ("any", 2), "atan": ("any", 2), "asin": ("unit", 4),
    "acos": ("unit", 4), "tanh": ("any", 4), "sinh": ("exp", 2), "cosh": ("exp", 2), "asinh": ("any", 2),
    "acosh": ("above1", 4), "atanh": ("unit", 2), "cbrt": ("any", 4), "log1p": ("above-1", 2), "expm1": ("exp", 2),
    "exp2": ("exp2", 2), "exp": ("exp", 2), "log": ("positive", 1), "sqrt": ("positive", 0),
    "rsqrt": ("positive", 1), "logistic": ("exp", 2), "erf": ("any", 4), "erfc": ("erfc", 512),
    "erf_inv": ("erf_inv", 8), "lgamma": ("gamma", ("rel", 1e-14)), "digamma": ("gamma", ("rel", 1e-10)),
    "neg": ("any", 0), "abs": ("any", 0), "sign": ("any", 0), "floor": ("any", 0), "ceil": ("any", 0),
    "round": ("any", 0), "square": ("any", 0), "is_finite": ("any", 0),
}
REAL_BINARY = {"atan2": 2, "rem": 0, "pow": 2, "nextafter": 0, "add": 0, "sub": 0, "mul": 0, "div": 0, "max": 0,
               "min": 0}
# Complex results: |got - want| <= tol * eps * |want|.
COMPLEX_UNARY = {
    "exp": 4, "exp2": 8, "expm1": 8, "log": 4, "log1p": 8, "sqrt": 4, "rsqrt": 4, "sin": 4, "cos": 4, "tan": 8,
    "sinh": 4, "cosh": 4, "tanh": 8, "asin": 8, "acos": 8, "atan": 8, "asinh": 8, "acosh": 8, "atanh": 8,
    "logistic": 8, "neg": 0, "sign": 2, "square": 2,
}
COMPLEX_BINARY = {"pow": 64, "add": 0, "mul": 2, "div": 4}

# JAX's own float64 sinh, cosh and exp2 lose up to ~700 ulp at large |x|, its log1p and atanh ~130 ulp, its
# complex log1p ~100 eps, log and cosh ~12 eps, its complex sinh all accuracy for tiny arguments, and its
# erf_inv hundreds of ulps near +-1, its rsqrt 2 ulp on AVX-512 CPUs: there irax agrees with NumPy, and
# JAX gets a wider margin. erfc is IREE's (and XLA's) own approximation, ~400 ulp off in the far tail
# (x > 10) where eager uses math.erfc.
JAX_TOL = {("sinh", "float64"): 1024, ("cosh", "float64"): 1024, ("exp2", "float64"): 1024,
           ("log1p", "float64"): 256, ("atanh", "float64"): 256, ("lgamma", "float64"): ("rel", 1e-14),
           ("digamma", "float64"): ("rel", 1e-14), ("erfc", "float64"): 16, ("rsqrt", "float64"): 4,
           ("log1p", "complex128"): 256, ("log", "complex128"): 32, ("cosh", "complex128"): 32}
JAX_SKIP = {("erf_inv", "float64"), ("sinh", "complex128")}
SUBNORMAL_EXACT = {"rem", "cbrt"}
# Which zero max(-0, +0) returns is unspecified; eager sign(-0) and round(-0.4) are +0, jit's (and JAX's) -0.
ZERO_SIGN_FREE = {"max", "min", "sign", "round"}
# The eager rule rounds |x| + 0.5 (wrong from 2**52 up, where that sum rounds to even); JAX agrees with jit.
EAGER_DOMAIN = {"round": lambda x: np.abs(x) < 2.0**52}
# C99 corner cases (an infinite or NaN part) are compared with NumPy for these complex ops only.
COMPLEX_SPECIALS_MATCH = {"exp", "sqrt", "asin", "acos", "atan", "asinh", "atanh", "rsqrt", "logistic", "neg"}
# sin, cos, tan at arguments that need the whole Payne-Hanek reduction, correctly rounded (mpmath, 3000
# bits). NumPy's own cos and tan miss the first by 8 and 14 ulps.
HARD_TRIG = {
    5.319372648326541e+255: (1.0, -4.687165924254628e-19, -2.133485385753704e+18),
    8.98846567431158e+307: (0.563127779850884, -0.826369834614148, -0.6814476476066215),
    1e+300: (-0.8178819121159085, -0.5753861119575491, 1.4214488238747245),
    1073741824.5: (-0.16458741069886315, 0.9863625014361829, -0.1668630046856175),
    1e+22: (-0.8522008497671888, 0.523214785395139, -1.6287782256068988),
    3.4173334435499e+302: (0.7340992545060749, -0.6790421817042185, -1.081080489968499),
}

CASES = ([(n, "float64") for n in [*REAL_UNARY, *REAL_BINARY]]
         + [(n, "complex128") for n in [*COMPLEX_UNARY, *COMPLEX_BINARY]]
         + [("trig at hard arguments", "float64"), ("float32 unchanged", "float32")])


# --- inputs ---------------------------------------------------------------------------------------------

_SPECIALS = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-300,
             -1e-300, 1e300, -1e300, 5e-324, -1e-310]


def _real_inputs(domain, rng):
    u, e = rng.uniform, lambda lo, hi, n: 10.0 ** rng.uniform(lo, hi, n)
    both = lambda a: np.concatenate([a, -a])
    near = np.array([k * math.pi / 2 for k in (1, 2, 3, 7, 100, 1e4, 1e6, 1e9, 2.0**40)])
    values = {
        "any": lambda: [u(-10, 10, 1500), both(e(-300, 300, 600)), both(e(8, 22, 200)), near,
                        np.nextafter(near, 0), both(np.array([2.0**30, 2.0**30 - 1, 2.0**52 + 1]))],
        "unit": lambda: [u(-1, 1, 1500), both(1 - e(-16, -1, 200)), both(e(-300, -1, 300)), both(1 + e(-16, 1, 50))],
        "above1": lambda: [1 + e(-16, 1, 800), e(0, 300, 500), u(-3, 1, 100)],
        "above-1": lambda: [u(-1, 1, 1000), -1 + e(-16, -1, 200), both(e(-300, -1, 300)), e(0, 300, 300),
                            u(-5, -1, 50)],
        "exp": lambda: [u(-2, 2, 800), u(-750, 750, 800), both(e(-300, -1, 300)), both(np.array([709.7, 710.4]))],
        "exp2": lambda: [u(-2, 2, 800), u(-1080, 1030, 800), both(e(-300, -1, 300))],
        "erfc": lambda: [u(-6, 25, 1500), both(e(-300, -1, 200))],
        "erf_inv": lambda: [u(-0.99, 0.99, 1500), both(e(-300, -1, 200)), both(np.array([1.0, 1.5]))],
        "positive": lambda: [e(-300, 300, 1500), u(0, 4, 500), -e(-3, 3, 20)],
        "gamma": lambda: [u(-20, 20, 1200), e(-8, 300, 400), np.arange(-5.0, 6.0), np.arange(-5.0, 1.0) + 1e-3,
                          np.array([0.5, 1.5, 2.5, -0.5, 171.6, 1e-300, -1e-300])],
    }[domain]()
    return np.concatenate([*values, _SPECIALS])


def _binary_inputs(name, rng):
    grid = np.array(_SPECIALS + [3.0, -3.0, 2.5, -2.5, 1e308, -1e308])
    gx, gy = (a.ravel() for a in np.meshgrid(grid, grid))
    wide = lambda n: rng.standard_normal(n) * 10.0 ** rng.uniform(-300, 300, n)
    if name == "pow":
        x = np.concatenate([rng.uniform(0, 10, 1500), 10.0 ** rng.uniform(-300, 300, 1500), -rng.uniform(0, 10, 300)])
        y = np.concatenate([rng.uniform(-700, 700, 1500) / np.log(x[:1500]),     # |y log x| up to 700
                            rng.uniform(-2, 2, 1500), rng.integers(-30, 30, 300)])
    elif name == "rem":
        x = np.concatenate([wide(3000), rng.standard_normal(3000) * 50, rng.integers(1, 2**52, 200) * 5e-324])
        y = np.concatenate([wide(3000), rng.standard_normal(3000) * 3, rng.integers(1, 2**20, 200) * 5e-324])
    else:
        x = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.uniform(-5, 5, 2000), wide(1000)])
        y = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.uniform(-5, 5, 2000), wide(1000)])
    return np.concatenate([x, gx]), np.concatenate([y, gy])


def _complex_inputs(name, rng):
    polar = lambda n, lo, hi: 10.0 ** rng.uniform(lo, hi, n) * np.exp(1j * rng.uniform(-np.pi, np.pi, n))
    axis = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 1e-300, 1e300])
    axis = np.concatenate([axis, -axis])
    z = np.concatenate([polar(1500, -3, 1), polar(300, -300, 300), 1 + polar(200, -10, -1), -1 + polar(200, -10, -1),
                        1j + polar(200, -10, -1), -1j + polar(200, -10, -1), axis + 0j, axis - 0j,
                        [complex(0.0, v) for v in axis], [complex(-0.0, v) for v in axis]])
    grid = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 3.0, 1e300]
    z = np.concatenate([z, [complex(a, b) for a in grid for b in grid]])
    if name in ("exp", "exp2", "expm1", "sin", "cos", "tan", "sinh", "cosh", "tanh", "logistic", "square"):
        with np.errstate(invalid="ignore"):    # where the result would overflow, the same angle at |z| = 3
            z = np.where(np.isfinite(z) & (np.abs(z) >= 500), z / np.abs(z) * 3, z)
    return z


def _complex_binary_inputs(name, rng):
    z = 10.0 ** rng.uniform(-1, 1, 3000) * np.exp(1j * rng.uniform(-np.pi, np.pi, 3000))
    w = 2 * (rng.standard_normal(3000) + 1j * rng.standard_normal(3000))
    if name == "pow":   # 0**w is 0 for Re w > 0, else NaN, and z**0 is 1 (as NumPy)
        return np.concatenate([z, [0j, 0j, 0j, 0j, 1 + 1j]]), np.concatenate([w, [1 + 1j, 2, -1, 0, 0]])
    return z, w


# --- comparisons ----------------------------------------------------------------------------------------

def _real_report(got, want, tol, zero_sign_free=False):
    """(messages for elements beyond ``tol``, the largest error seen) of float64 ``got`` vs ``want``."""
    if got.dtype == np.bool_:
        bad = got != want
        return [f"got {g} want {w}" for g, w in zip(got[bad][:5], want[bad][:5])], 0.0
    with np.errstate(all="ignore"):
        diff = np.abs(got - want)
        err = diff / np.maximum(1.0, np.abs(want)) if isinstance(tol, tuple) else diff / np.spacing(np.abs(want))
        limit = tol[1] if isinstance(tol, tuple) else tol
        same = (got == want) & ((np.signbit(got) == np.signbit(want)) | zero_sign_free)
        flushed = (np.abs(want) < TINY) & (np.abs(got) <= TINY) & (want != 0)
        measurable = np.isfinite(want) & (want != 0) & ~flushed
        ok = same | (np.isnan(got) & np.isnan(want)) | flushed | (measurable & (err <= limit))
        measured = np.max(np.where(measurable & np.isfinite(err), err, 0), initial=0)
    return [f"got {g!r} want {w!r}" for g, w in zip(got[~ok][:5], want[~ok][:5])], float(measured)


def _complex_report(got, want, tol):
    with np.errstate(all="ignore"):
        err = np.abs(got - want) / np.abs(want) / EPS

        def same(a, b):
            return (np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))
        flushed = (np.abs(want) < 1e-290) & (np.abs(got) < 1e-290)
        measurable = np.isfinite(want) & (np.abs(want) >= 1e-290)
        ok = (same(got.real, want.real) & same(got.imag, want.imag)) | flushed | (measurable & (err <= tol))
        measured = np.max(np.where(measurable & np.isfinite(err), err, 0), initial=0)
    return [f"got {g!r} want {w!r}" for g, w in zip(got[~ok][:5], want[~ok][:5])], float(measured)


def _real_keep(name, args, jax):
    keep = np.ones(np.shape(args[0]), bool)
    for a in args:
        if jax or name not in SUBNORMAL_EXACT:
            keep &= ~((a != 0) & (np.abs(a) < TINY))
    if not jax and name in EAGER_DOMAIN:
        keep &= EAGER_DOMAIN[name](args[0])
    return keep


def _compare_real(name, args, got, want, tol, jax):
    keep = _real_keep(name, args, jax)
    return _real_report(got[keep], want[keep], tol, name in ZERO_SIGN_FREE)


def _compare_complex(name, args, got, want, tol, jax):
    z = args[0]
    keep = np.isfinite(z) if jax or name not in COMPLEX_SPECIALS_MATCH else np.ones(z.shape, bool)
    if jax:   # JAX ignores the sign of a zero part on branch cuts (sqrt(-1 - 0j) = 1j), and 0**(1+1j) is NaN
        for a in args:
            keep &= ~(((a.real == 0) & np.signbit(a.real)) | ((a.imag == 0) & np.signbit(a.imag))) & (a != 0)
    if name == "log1p" and not jax:
        keep &= np.abs(z) >= 0.5     # NumPy's log1p(z) is log(hypot(1 + a, b)), inexact for small |z|
    return _complex_report(got[keep], want[keep], tol)


# --- the child process --------------------------------------------------------------------------------

def _jitted(module, name_args):
    """Every (name, args) of ``name_args`` in one jitted function of ``module`` (irax or jax)."""
    names = [n for n, _ in name_args]

    def all_ops(*arg_lists):
        return [getattr(module.lax, n)(*a) for n, a in zip(names, arg_lists)]
    return [np.asarray(o) for o in module.jit(all_ops)(*[a for _, a in name_args])]


def _eager(name, args):
    import irax
    return np.asarray(getattr(irax.lax, name)(*[irax.numpy.asarray(a) for a in args]))


def _check_group(report, dtype, name_args, tolerances, compare, extra=()):
    """Jits ``name_args`` and ``extra`` with irax (and JAX); records jit-vs-eager and jit-vs-JAX mismatches
    of ``name_args``, and returns irax's results for ``extra`` (None if the compile failed)."""
    import irax
    try:
        outs = _jitted(irax, [*name_args, *extra])
    except Exception as e:  # one compile for the group: each of its ops reports the failure
        for name, _ in name_args:
            report[f"{name}-{dtype}"] = {"errors": [f"jit failed: {str(e)[:3000]}"]}
        return None
    try:
        import jax
        jax_outs = _jitted(jax, name_args)
    except ImportError:
        jax_outs = [None] * len(name_args)
    for (name, args), out, jax_out in zip(name_args, outs, jax_outs):
        key = (name, dtype)
        errors, measured = compare(name, args, out, _eager(name, args), tolerances[name], False)
        entry = {"errors": [f"jit vs eager: {m}" for m in errors], "max_err_vs_eager": measured}
        if jax_out is not None and key not in JAX_SKIP:
            errors, measured = compare(name, args, out, jax_out, JAX_TOL.get(key, tolerances[name]), True)
            entry["errors"] += [f"jit vs JAX: {m}" for m in errors]
            entry["max_err_vs_jax"] = measured
        report[f"{name}-{dtype}"] = entry
    return outs[len(name_args):]


def _hard_trig(outs):
    if outs is None:
        return {"errors": ["jit failed"]}
    got, want = np.stack(outs, axis=1).ravel(), np.array(list(HARD_TRIG.values())).ravel()
    errors, measured = _real_report(got, want, 1)
    return {"errors": errors, "max_err_vs_mpmath": measured}


def _float32_unchanged():
    """float32 programs keep IREE's own ops; float64 ones get the expansions."""
    import irax
    errors = []
    for dtype, expect in ((np.float32, True), (np.float64, False)):
        text = irax.jit(irax.lax.sin).lower(np.ones(3, dtype)).as_text()
        if ("stablehlo.sine" in text) != expect:
            errors.append(f"{np.dtype(dtype).name} sin lowers {'without' if expect else 'to'} stablehlo.sine")
    return {"errors": errors}


def child_main():
    rng = np.random.default_rng(20240611)
    report = {}
    real = [(n, (_real_inputs(domain, rng),)) for n, (domain, _) in REAL_UNARY.items()]
    real += [(n, _binary_inputs(n, rng)) for n in REAL_BINARY]
    hard = [(n, (np.array(list(HARD_TRIG)),)) for n in ("sin", "cos", "tan")]
    tolerances = {n: t for n, (_, t) in REAL_UNARY.items()} | REAL_BINARY
    hard_outs = _check_group(report, "float64", real, tolerances, _compare_real, hard)
    report["trig at hard arguments-float64"] = _hard_trig(hard_outs)
    complex_args = [(n, (_complex_inputs(n, rng),)) for n in COMPLEX_UNARY]
    complex_args += [(n, _complex_binary_inputs(n, rng)) for n in COMPLEX_BINARY]
    _check_group(report, "complex128", complex_args, COMPLEX_UNARY | COMPLEX_BINARY, _compare_complex)
    report["float32 unchanged-float32"] = _float32_unchanged()
    print(json.dumps(report))


# --- the tests ------------------------------------------------------------------------------------------

def _report():
    env = dict(os.environ, JAX_ENABLE_X64="1", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=900)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, f"the x64 child failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return json.loads(lines[-1])


@pytest.mark.parametrize("name,dtype", CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_x64_elementwise(name, dtype, shared):
    entry = shared("x64-report", _report)[f"{name}-{dtype}"]
    assert not entry["errors"], "\n".join(entry["errors"][:10])


if __name__ == "__main__":
    child_main()
