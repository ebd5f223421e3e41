"""``irax.scipy.optimize.minimize`` against JAX's: BFGS and the experimental L-BFGS on Rosenbrock's function and a
quadratic with extra ``args``, with solver options; every field of ``OptimizeResults`` (iterates, counters and status
codes included) eagerly, under ``irax.jit`` and with x64 enabled (in a child process, x64 being process-global);
the ``make_jaxpr`` text and JAX's exceptions.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import irax
import irax.numpy as inp
import irax.scipy.optimize as iopt

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.optimize as jopt  # noqa: E402

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
METHODS = {"bfgs": "BFGS", "lbfgs": LBFGS}


def rosenbrock(np_):
    return lambda x: np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quartic(np_):
    """A convex quadratic plus a quartic, centred at ``a`` (passed through ``args``)."""
    return lambda x, a: np_.sum((x - a) ** 2 * np_.arange(1.0, 1.0 + x.shape[0])) + 0.1 * np_.sum(x ** 4)


# name -> (objective, x0, args, options); float32 iterates differ from JAX's in their last bits (NumPy and XLA round
# differently), which can change a branch of the line search near convergence: these cases take the same branches.
# Near Rosenbrock's minimum the inverse Hessian estimate amplifies those bits to 1e-3 (1e-11 in float64).
PROBLEMS = {
    "rosenbrock2": (rosenbrock, np.array([0.5, 0.8], np.float32), (), None),
    "rosenbrock3": (rosenbrock, np.array([-1.2, 1.0, 0.5], np.float32), (), None),
    "quartic": (quartic, np.array([-1.2, 1.0, 0.5], np.float32), (np.float32(0.3),), None),
    "quartic-maxiter": (quartic, np.array([-1.2, 1.0, 0.5], np.float32), (np.float32(0.3),), {"maxiter": 2}),
    "quartic-gtol-norm": (quartic, np.array([-1.2, 1.0, 0.5], np.float32), (np.float32(-0.5),),
                          {"gtol": 1e-2, "norm": 2}),
}
LBFGS_OPTIONS = {"maxcor": 2, "maxls": 5, "ftol": 1e-6}


def _close(got, want, tol=2e-3):
    assert type(got).__name__ == "OptimizeResults" and got._fields == want._fields
    for field, g, w in zip(want._fields, got, want, strict=True):
        if w is None:
            assert g is None, field
            continue
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape), field
        if field in ("success", "status", "nfev", "njev", "nit"):
            assert g.tolist() == w.tolist(), field
        else:
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=field)


def _run(optimize, np_, problem, method, extra_options=None):
    fun, x0, args, options = PROBLEMS[problem]
    options = dict(options or {}, **(extra_options or {}))
    return optimize.minimize(fun(np_), x0, args, method=method, options=options or None)


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("problem", list(PROBLEMS))
def test_eager(problem, method):
    _close(_run(iopt, inp, problem, METHODS[method]), _run(jopt, jnp, problem, METHODS[method]))


def test_lbfgs_options_and_method_case():
    _close(_run(iopt, inp, "quartic", LBFGS.upper(), LBFGS_OPTIONS), _run(jopt, jnp, "quartic", LBFGS, LBFGS_OPTIONS))
    _close(_run(iopt, inp, "rosenbrock2", "bfgs", {"line_search_maxiter": 3}),
           _run(jopt, jnp, "rosenbrock2", "BFGS", {"line_search_maxiter": 3}))


def test_results_type():
    assert iopt.OptimizeResults._fields == jopt.OptimizeResults._fields
    assert sorted(iopt.__all__) == sorted(n for n in dir(jopt) if not n.startswith("_"))


def test_jit():
    """Both methods in one module, with ``x0`` and the extra argument traced."""
    def program(optimize, np_):
        return lambda x0, a: [optimize.minimize(quartic(np_), x0, (a,), method=m) for m in METHODS.values()]
    x0, (a,) = PROBLEMS["quartic"][1], PROBLEMS["quartic"][2]
    for got, want in zip(irax.jit(program(iopt, inp))(x0, a), program(jopt, jnp)(x0, a), strict=True):
        _close(got, want)


# --- x64, in a child process ----------------------------------------------------------------------------------------

X64_CASES = {"rosenbrock4": (rosenbrock, ()), "quartic4": (quartic, (0.3,))}
X64_START = np.array([-1.0, 1.5, 0.3, 0.8])  # where float32 rounding leads irax and JAX apart


def _x64_report():
    """The case name -> ``"ok"`` or the assertion message, comparing irax with JAX in the child."""
    report = {}
    for problem, (fun, args) in X64_CASES.items():
        for method in METHODS:
            got, want = (optimize.minimize(fun(np_), X64_START, args, method=METHODS[method])
                         for optimize, np_ in ((iopt, inp), (jopt, jnp)))
            try:
                _close(got, want, 1e-8)
                report[f"{problem}-{method}"] = "ok"
            except AssertionError as e:
                report[f"{problem}-{method}"] = str(e)
    return report


def test_x64():
    env = dict(os.environ, JAX_ENABLE_X64="1", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=600)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, f"the x64 child failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert json.loads(lines[-1]) == {f"{p}-{m}": "ok" for p in X64_CASES for m in METHODS}


# --- jaxpr text and errors -------------------------------------------------------------------------------------------

def test_jaxpr_text():
    def program(optimize, np_):
        return lambda x0, a: optimize.minimize(quartic(np_), x0, (a,), method="BFGS", options={"maxiter": 3})
    x0, (a,) = PROBLEMS["quartic"][1], PROBLEMS["quartic"][2]
    assert str(irax.make_jaxpr(program(iopt, inp))(x0, a)) == str(jax.make_jaxpr(program(jopt, jnp))(x0, a))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("name,kind,match", [
    ("args-not-tuple", TypeError, r"args argument to jax.scipy.optimize.minimize must be a tuple, got \[0.3\]"),
    ("unknown-method", ValueError, "Method Nelder-Mead not recognized"),
    ("unknown-option", TypeError, "unexpected keyword argument 'bogus'"),
])
def test_errors(name, kind, match):
    x0 = PROBLEMS["quartic"][1]

    def call(optimize, np_):
        if name == "args-not-tuple":
            return optimize.minimize(quartic(np_), x0, [0.3], method="BFGS")
        if name == "unknown-method":
            return optimize.minimize(rosenbrock(np_), x0, method="Nelder-Mead")
        return optimize.minimize(rosenbrock(np_), x0, method="BFGS", options={"bogus": 1})

    with pytest.raises(kind, match=match):
        call(iopt, inp)
    theirs = _error(lambda: call(jopt, jnp))
    assert theirs is not None and _error(lambda: call(iopt, inp)) == theirs


if __name__ == "__main__":
    print(json.dumps(_x64_report()))
