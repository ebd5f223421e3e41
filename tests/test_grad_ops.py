"""Derivatives of every differentiable primitive: ``check_grads`` (forward and reverse, order 2) and JAX's values.

Each case is one primitive (or one configuration of it) as a function of ``lax`` (irax's or JAX's) and its
operands, at points in its smooth domain that include the interesting ones where the derivative is defined:
0 for sin, tanh, expm1 and friends, negative numbers, values near a domain's edge but inside it (asin at
0.95, acosh at 1.05, log at 0.05; closer in float64), the largest magnitudes where finite differences stay
meaningful, zeros inside ``reduce_prod`` and ``cumprod``, starts that ``dynamic_slice`` clamps.

* float32, eagerly: ``check_grads(f, args, order=2, modes=("fwd", "rev"))``; the gradient of a weighted sum
  of the output, and the gradient of a weighted sum of that gradient (Hessian-vector products), against
  JAX's (the weights are random, so a transposition that permutes or drops cotangents cannot hide behind
  all-ones cotangents). JAX's values come from one ``jax.jit`` of every case (eager JAX compiles each op).
* float32, at kinks, ties and domain edges (``KINK_CASES``): first-order gradients equal to JAX's, whose
  conventions these are (max splits ties, abs'(0) = 1, sqrt'(0) = inf, ...).
* float32 under ``irax.jit``: the same gradients against JAX, every case of a group in one jitted function
  (three IREE compiles in all; first order only, to keep them small).
* float64: x64 is process-global, so a child process (this file run as a script, JAX_ENABLE_X64=1) runs
  ``check_grads`` order 2 with tight tolerances (eps 1e-7, tolerance 1e-7), compares gradients and
  second-order products with JAX's to ~1e-11, also at large and tiny magnitudes (the ``*_wide`` cases:
  JAX only, no finite differences), jits a subset (``X64_JIT``), and prints a JSON report; each test reads
  its entry (as tests/test_x64.py). The child starts in the background at the module's first test, so it
  runs while the float32 tests do; under pytest-xdist it runs once per run, and the JAX reference and the
  jitted groups are computed once and shared between the workers through locked files.

``polygamma`` is differentiated in ``x`` only (JAX raises for ``m``); IREE's CHLO polygamma is NaN at
negative ``x``, so the jitted ``digamma`` case stays at positive points.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import traceback
import zlib
from typing import Callable

import numpy as np
import pytest
from conftest import shared_root

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

# --- the cases ------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class Case:
    id: str
    fn: Callable          # fn(lax, *args): one primitive of ``lax`` (irax.lax or jax.lax)
    args: tuple           # float64 / complex128 values, cast to the run's dtype unless ``fixed``
    order: int = 2
    tol: float | None = None       # check_grads atol and rtol in float32 (None: its default, 2e-3)
    eps32: float = 1e-4            # check_grads eps in float32 (its default; larger where rounding dominates)
    tol64: float = 1e-7            # check_grads atol and rtol in float64
    eps64: float = 1e-7            # check_grads eps in float64
    jax_rtol: float = 1e-5         # irax vs JAX gradients, float32
    jax_rtol2: float = 1e-4        # irax vs JAX second-order products, float32
    jax_rtol64: float = 1e-11      # irax vs JAX gradients, float64
    fixed: tuple = ()              # dtypes that override the run's for each operand (None: the run's)
    x64_only: bool = False
    group: str | None = None       # the jitted group that also runs it (float32)
    args64: tuple | None = None    # other values for float64, where finite differences reach further
    finite_differences: bool = True  # check_grads (else only the comparison with JAX)


def _a(*rows):
    return np.array(rows, np.float64)


def _grid(shape, seed, lo=-2.0, hi=2.0, distinct=False):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if distinct:   # well-separated values: no ties for max, min, cummax, cummin
        values = (rng.permutation(n) - n / 2) * (hi - lo) / n + rng.uniform(0.1, 0.3)
    else:
        values = rng.uniform(lo, hi, n)
    return values.reshape(shape)


def _complex(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)


# Elementwise unary ops: points; more points for float64, where finite differences reach further (1e4 steps
# of 1e-7 from an edge); float64 points of large (or tiny) magnitude compared with JAX only (no finite differences
# there: a step of 1e-6 is lost in rounding); options.
_UNARY = {
    "exp": ([-20.0, -1.0, 0.0, 0.5, 10.0], [], [-700.0, 100.0, 700.0], {}),
    "exp2": ([-20.0, -1.0, 0.0, 0.5, 10.0], [], [-1000.0, 150.0, 1000.0], {}),
    "log": ([0.05, 0.5, 1.0, 3.0, 1e3], [1e-3], [1e-300, 1e-100, 1e8, 1e300], {}),
    "expm1": ([-5.0, -1e-3, 0.0, 1e-3, 2.0, 10.0], [1e-8, -1e-8], [-50.0, 50.0, 700.0], {"eps32": 1e-3}),
    "log1p": ([-0.9, -1e-3, 0.0, 1e-3, 5.0, 1e3], [-0.999, 1e-8], [-1 + 1e-10, 1e8, 1e300], {}),
    # 1 - tanh(-5)**2 is 1.8e-4: one ulp of tanh (NumPy's vs XLA's) moves it by 7e-4
    "tanh": ([-5.0, -0.5, 0.0, 0.5, 3.0], [1e-8], [-300.0, 1e-300, 20.0], {"jax_rtol": 2e-3, "jax_rtol2": 2e-3}),
    "logistic": ([-15.0, -2.0, 0.0, 2.0, 15.0], [], [-30.0, -700.0, 1e-300], {}),
    "sin": ([-3.0, -1.0, 0.0, 1.5, 10.0], [], [100.0, -1e4, 1e6], {}),
    "cos": ([-3.0, -1.0, 0.0, 1.5, 10.0], [], [100.0, -1e4, 1e6], {}),
    "tan": ([-1.3, -0.5, 0.0, 0.5, 1.3], [1.55, -1.55, 1e-8], [100.0, 1e-300], {}),
    "asin": ([-0.95, -0.5, 0.0, 0.5, 0.95], [0.999, -0.999], [1e-300, 1 - 1e-12], {}),
    "acos": ([-0.95, -0.5, 0.0, 0.5, 0.95], [0.999, -0.999], [1e-300, 1 - 1e-12], {}),
    "atan": ([-30.0, -1.0, 0.0, 0.5, 10.0], [-1e-8], [1e4, 1e100, -1e200], {}),
    "sinh": ([-5.0, -1.0, 0.0, 0.5, 8.0], [], [30.0, -300.0, 700.0], {}),
    "cosh": ([-5.0, -1.0, 0.0, 0.5, 8.0], [], [30.0, -300.0, 700.0], {}),
    "asinh": ([-20.0, -1.0, 0.0, 0.5, 20.0], [-1e-8], [1e6, -1e150, 1e-300], {}),
    # The reverse order-2 check compares two inner products that cancel to -0.05: 2.5e-6 off (JAX's check_grads
    # too). At 1 + 1e-10, x * x - 1 loses 6 digits unless fused into an FMA, as XLA's jitted code does.
    "acosh": ([1.05, 1.5, 2.0, 10.0, 100.0], [1.001], [1 + 1e-10, 1e6, 1e150], {"tol64": 1e-5, "jax_rtol64": 1e-9}),
    "atanh": ([-0.95, -0.5, 0.0, 0.5, 0.95], [0.999, -0.999], [1e-300, 1 - 1e-12], {}),
    "sqrt": ([0.05, 0.5, 1.0, 4.0, 100.0], [1e-3], [1e-300, 1e8, 1e300], {}),
    "rsqrt": ([0.01, 0.5, 1.0, 4.0, 1e4], [1e-3], [1e-300, 1e8, 1e300], {}),
    "cbrt": ([-27.0, -0.5, 0.05, 1.0, 8.0], [1e-3], [-1e6, 1e-300, 1e300], {}),
    "erf": ([-3.0, -0.5, 0.0, 0.5, 2.5], [-1e-8], [5.0, -10.0, 1e-300], {}),
    "erfc": ([-3.0, -0.5, 0.0, 0.5, 2.5], [-1e-8], [5.0, -10.0, 25.0], {}),
    "erf_inv": ([-0.95, -0.5, 0.0, 0.5, 0.95], [0.999, -0.999], [1e-300, 0.999999], {}),
    # eager digamma (an asymptotic series) is good to ~1e-11 absolute; digamma(1.46) = 0
    # XLA's polygamma sums 9 terms before its asymptotic tail, wrong below x = -9 (2.85e12 at -10.5, where
    # psi'(-10.5) = 9.7788): the wide points stay above
    "lgamma": ([-2.5, -0.5, 0.5, 1.0, 2.0, 10.0], [-3.5, 50.0], [1e-8, -7.5, 1e10],
               {"eps32": 1e-3, "jax_rtol64": 1e-9}),
    "digamma": ([0.5, 1.0, 1.5, 2.5, 10.0], [-2.5, -0.5, 30.0], [1e-3, -7.5, 1e6],
                {"eps32": 1e-3, "jax_rtol64": 1e-9}),
    "abs": ([-3.0, -0.5, 0.2, 4.0], [], [1e-300, -1e300], {}),
    "square": ([-3.0, -0.5, 0.0, 2.0], [1e-8], [-1e100, 1e150], {"eps32": 1e-3}),
    "neg": ([-3.0, 0.0, 2.0], [], [1e300], {}),
}


def _unary_cases():
    cases = []
    for name, (points, more64, wide64, kw) in _UNARY.items():
        fn = functools.partial(lambda n, lax, x: getattr(lax, n)(x), name)
        cases.append(Case(name, fn, (_a(*points),), group="elementwise", args64=(_a(*points, *more64),), **kw))
        cases.append(Case(f"{name}_wide", fn, (_a(*wide64),), x64_only=True, finite_differences=False,
                          **{k: v for k, v in kw.items() if k in ("order", "jax_rtol64")}))
    for y, points in ((2, [-3.0, -0.5, 0.0, 2.0]), (3, [-3.0, -0.5, 0.0, 2.0]), (-2, [-3.0, -0.5, 0.5, 2.0])):
        cases.append(Case(f"integer_pow_y{y}", functools.partial(lambda y, lax, x: lax.integer_pow(x, y), y),
                          (_a(*points),), group="elementwise", eps32=1e-3))
    return cases


def _binary(name, x, y, **kw):
    return Case(name, functools.partial(lambda n, lax, a, b: getattr(lax, n)(a, b), name), (x, y), **kw)


_X = _a([-2.0, 0.0, 1.5], [3.0, -0.5, 10.0])
_BINARY_CASES = [
    # zero derivatives, away from the jumps
    Case("sign_floor_ceil_round", lambda lax, x: lax.add(lax.add(lax.sign(x), lax.floor(x)),
                                                          lax.add(lax.ceil(x), lax.round(x))),
         (_a(-2.7, -0.3, 0.2, 1.4, 3.6),), group="elementwise"),
    _binary("add", _X, _a([1.0, -3.0, 0.0], [0.25, 2.0, -1.0]), group="elementwise"),
    _binary("sub", _X, _a([1.0, -3.0, 0.0], [0.25, 2.0, -1.0]), group="elementwise", eps32=1e-3),
    _binary("mul", _X, _a([1.0, -3.0, 0.0], [0.25, 2.0, -1.0]), group="elementwise"),
    _binary("div", _X, _a([1.0, -3.0, 0.5], [0.25, 2.0, -1.0]), group="elementwise"),
    # x / y stays away from integers: rem is smooth there (d/dy = -trunc(x / y)).
    _binary("rem", _a(5.3, -5.3, 0.7, 2.5, -7.9), _a(2.0, 2.0, 3.0, -1.5, 3.0), group="elementwise"),
    _binary("max", _a(-2.0, 0.0, 1.5, 3.0), _a(1.0, -1.0, 2.0, -4.0), group="elementwise"),
    _binary("min", _a(-2.0, 0.0, 1.5, 3.0), _a(1.0, -1.0, 2.0, -4.0), group="elementwise"),
    _binary("pow", _a(0.1, 0.5, 2.0, 3.0, 10.0), _a(-1.5, 0.0, 2.5, 1.0, 3.0), group="elementwise"),
    # every quadrant, the positive x axis (y = 0) and the y axis (x = 0); not the branch cut (y = 0, x < 0)
    _binary("atan2", _a(1.0, -1.0, 0.0, 0.5, -2.0, 1.0), _a(1.0, 1.0, 1.0, -1.0, -0.5, 0.0), group="elementwise"),
    Case("polygamma_x", lambda lax, x: lax.polygamma(np.full(x.shape, 2.0, x.dtype), x), (_a(0.5, 1.0, 2.5, 7.0),),
         group="elementwise", eps32=1e-3, jax_rtol64=1e-9),
    Case("clamp", lambda lax, lo, x, hi: lax.clamp(lo, x, hi),
         (_a(-1.0, -1.0, -1.0, -2.0, -1.0), _a(-2.0, -0.5, 0.0, 0.5, 3.0), _a(1.0, 1.0, 0.5, 1.0, 2.0)),
         group="elementwise"),
    Case("clamp_scalar_bounds", lambda lax, x: lax.clamp(-1.0, x, 1.0), (_a(-2.0, -0.5, 0.0, 0.5, 3.0),),
         group="elementwise"),
    Case("select_n_bool", lambda lax, a, b: lax.select_n(np.array([True, False, True, False]), a, b),
         (_a(1.0, -2.0, 0.0, 3.0), _a(-1.0, 0.5, 2.0, 0.0)), group="elementwise"),
    Case("select_n_int32", lambda lax, a, b, c: lax.select_n(np.array([0, 1, 2, 1], np.int32), a, b, c),
         (_a(1.0, -2.0, 0.0, 3.0), _a(-1.0, 0.5, 2.0, 0.0), _a(4.0, 5.0, -6.0, 7.0)), group="elementwise"),
]

_X234 = _grid((2, 3, 4), 1)
_D234 = _grid((2, 3, 4), 2, distinct=True)
_D36 = _grid((3, 6), 3, distinct=True)
# reduce_prod and cumprod at points with zeros, two in one row: the derivative exists (products of the others)
_PROD = _a([1.5, 0.0, -2.0, 0.5], [0.0, -1.25, 0.0, 1.0], [0.5, -1.5, 2.0, -0.75])
_STRUCTURAL_CASES = [
    Case("reduce_sum", lambda lax, x: lax.reduce_sum(x, (0, 2)), (_X234,), group="structural"),
    Case("reduce_sum_all", lambda lax, x: lax.reduce_sum(x, (0, 1, 2)), (_X234,), group="structural"),
    Case("reduce_max", lambda lax, x: lax.reduce_max(x, (1,)), (_D234,), group="structural"),
    Case("reduce_min", lambda lax, x: lax.reduce_min(x, (0, 2)), (_D234,), group="structural"),
    Case("reduce_prod", lambda lax, x: lax.reduce_prod(x, (1,)), (_PROD,), group="structural"),
    Case("reduce_prod_axis0", lambda lax, x: lax.reduce_prod(x, (0,)), (_PROD,), group="structural"),
    Case("cumsum", lambda lax, x: lax.cumsum(x, axis=0), (_X234,), group="structural"),
    Case("cumsum_reverse", lambda lax, x: lax.cumsum(x, axis=2, reverse=True), (_X234,), group="structural"),
    Case("cumprod", lambda lax, x: lax.cumprod(x, axis=1), (_PROD,), group="structural"),
    Case("cumprod_reverse", lambda lax, x: lax.cumprod(x, axis=1, reverse=True), (_PROD,), group="structural"),
    Case("cummax", lambda lax, x: lax.cummax(x, axis=1), (_D36,), group="structural"),
    Case("cummin_reverse", lambda lax, x: lax.cummin(x, axis=1, reverse=True), (_D36,), group="structural"),
    Case("cumlogsumexp", lambda lax, x: lax.cumlogsumexp(x, axis=1),
         (_a([-30.0, 0.0, 30.0, 1.0, -1.0], [2.0, 2.0, -5.0, 0.5, 25.0]),), group="structural", eps32=1e-3),
    Case("cumlogsumexp_reverse", lambda lax, x: lax.cumlogsumexp(x, axis=0, reverse=True), (_X234,),
         group="structural"),
    Case("broadcast_in_dim", lambda lax, x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)), (_a(-1.0, 0.5, 2.0),),
         group="structural"),
    Case("broadcast_in_dim_size1", lambda lax, x: lax.broadcast_in_dim(x, (2, 3, 4), (0, 2)),
         (_grid((1, 4), 4),), group="structural"),
    Case("reshape", lambda lax, x: lax.reshape(x, (4, 6)), (_X234,), group="structural"),
    Case("reshape_dimensions", lambda lax, x: lax.reshape(x, (6, 4), dimensions=(1, 0, 2)), (_X234,),
         group="structural"),
    Case("transpose", lambda lax, x: lax.transpose(x, (2, 0, 1)), (_X234,), group="structural"),
    Case("rev", lambda lax, x: lax.rev(x, (0, 2)), (_X234,), group="structural"),
    Case("pad", lambda lax, x, v: lax.pad(x, v, ((1, 2, 1), (-1, 0, 2))), (_grid((2, 3), 5), np.float64(0.75)),
         group="structural"),
    Case("concatenate", lambda lax, a, b, c: lax.concatenate([a, b, c], 1),
         (_grid((2, 3), 6), _grid((2, 1), 7), _grid((2, 2), 8)), group="structural"),
    Case("stack", lambda lax, a, b, c: lax.stack([a, b, c], 1),
         (_grid((2, 3), 27), _grid((2, 3), 28), _grid((2, 3), 29)), group="structural"),
    Case("slice", lambda lax, x: lax.slice(x, (1, 0), (4, 6), (2, 3)), (_grid((4, 6), 9),), group="structural"),
    Case("dynamic_slice", lambda lax, x: lax.dynamic_slice(x, (1, 2), (2, 3)), (_grid((4, 6), 10),),
         group="structural"),
    Case("dynamic_slice_clamped", lambda lax, x: lax.dynamic_slice(x, (3, 5), (2, 3)), (_grid((4, 6), 11),),
         group="structural"),
    Case("dynamic_update_slice", lambda lax, x, u: lax.dynamic_update_slice(x, u, (1, 4)),
         (_grid((4, 6), 12), _grid((2, 3), 13)), group="structural"),
    Case("dot_general_batch", lambda lax, x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
         (_grid((2, 3, 4), 14), _grid((2, 4, 5), 15)), group="structural"),
    Case("dot_general_batch_inner", lambda lax, x, y: lax.dot_general(x, y, (((2,), (0,)), ((1,), (2,)))),
         (_grid((3, 2, 4), 16), _grid((4, 5, 2), 17)), group="structural"),
    Case("dot_general_matmul", lambda lax, x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))),
         (_grid((3, 4), 18), _grid((4, 2), 19)), group="structural"),
    Case("squeeze", lambda lax, x: lax.squeeze(x, (1, 3)), (_grid((2, 1, 3, 1), 20),), group="structural"),
    Case("expand_dims", lambda lax, x: lax.expand_dims(x, (0, 2)), (_grid((2, 3), 21),), group="structural"),
    Case("real", lambda lax, z: lax.real(z), (_complex((2, 3), 22),), group="structural"),
    Case("imag", lambda lax, z: lax.imag(z), (_complex((2, 3), 23),), group="structural"),
    Case("complex", lambda lax, x, y: lax.complex(x, y), (_grid((2, 3), 24), _grid((2, 3), 25)), group="structural"),
    Case("conj", lambda lax, z: lax.conj(z), (_complex((2, 3), 26),), group="structural"),
    Case("convert_element_type_f32_to_f64", lambda lax, x: lax.convert_element_type(x, np.float64),
         (_a(-1.5, 0.0, 0.25, 3.0),), fixed=(F32,), x64_only=True, tol64=1e-6, eps64=0.5),
    Case("convert_element_type_f64_to_f32", lambda lax, x: lax.convert_element_type(x, np.float32),
         (_a(-1.5, 0.0, 0.25, 3.0),), x64_only=True, tol64=1e-6, eps64=0.5),
]

CASES = _unary_cases() + _BINARY_CASES + _STRUCTURAL_CASES
F32_CASES = [c for c in CASES if not c.x64_only]
assert all(c.finite_differences for c in F32_CASES)


def _kink(id, fn, *args):
    return Case(id, fn, tuple(np.array(a, np.float64) for a in args), order=1, group="kinks")


# Points where a derivative is a convention (ties, kinks, domain edges, zeros): first-order gradients only, equal to
# JAX's, infinities and NaNs included. No finite differences there.
KINK_CASES = [
    _kink("abs_at_0", lambda lax, x: lax.abs(x), [0.0, -0.0, 1.0]),
    _kink("sqrt_at_0", lambda lax, x: lax.sqrt(x), [0.0, 1.0]),
    _kink("rsqrt_at_0", lambda lax, x: lax.rsqrt(x), [0.0, 1.0]),
    _kink("cbrt_at_0", lambda lax, x: lax.cbrt(x), [0.0, 1.0]),
    _kink("log_at_0", lambda lax, x: lax.log(x), [0.0, 1.0]),
    _kink("log1p_at_-1", lambda lax, x: lax.log1p(x), [-1.0, 0.0]),
    _kink("asin_at_1", lambda lax, x: lax.asin(x), [1.0, -1.0, 0.0]),
    _kink("atanh_at_1", lambda lax, x: lax.atanh(x), [1.0, -1.0, 0.0]),
    _kink("acosh_at_1", lambda lax, x: lax.acosh(x), [1.0, 2.0]),
    _kink("erf_inv_at_1", lambda lax, x: lax.erf_inv(x), [1.0, -1.0, 0.0]),
    _kink("stop_gradient", lambda lax, x: lax.mul(x, lax.stop_gradient(lax.exp(x))), [0.5, -1.0]),
    _kink("sign_floor_ceil_round_at_jumps", lambda lax, x: lax.add(lax.add(lax.sign(x), lax.floor(x)),
                                                                  lax.add(lax.ceil(x), lax.round(x))),
          [0.0, -0.0, 1.0, 2.5, -1.5]),
    _kink("saturating", lambda lax, x: lax.add(lax.add(lax.exp(x), lax.tanh(x)), lax.logistic(x)), [100.0, -200.0]),
    _kink("max_tie", lambda lax, x, y: lax.max(x, y), [1.0, 0.0, -2.0], [1.0, 0.0, -2.0]),
    _kink("min_tie", lambda lax, x, y: lax.min(x, y), [1.0, 0.0, -2.0], [1.0, 0.0, -2.0]),
    _kink("clamp_at_bounds", lambda lax, lo, x, hi: lax.clamp(lo, x, hi), [-1.0, -1.0, -1.0], [-1.0, 1.0, 0.0],
          [1.0, 1.0, 1.0]),
    _kink("reduce_max_tie", lambda lax, x: lax.reduce_max(x, (0,)), [1.0, 3.0, 3.0, 3.0, -1.0]),
    _kink("reduce_min_tie", lambda lax, x: lax.reduce_min(x, (0,)), [1.0, -3.0, 3.0, -3.0, -1.0]),
    _kink("cummax_tie", lambda lax, x: lax.cummax(x, axis=0), [1.0, 3.0, 3.0, 2.0, 3.0]),
    _kink("cummin_tie", lambda lax, x: lax.cummin(x, axis=0), [1.0, 1.0, 3.0, 0.0, 0.0]),
    _kink("pow_at_x0", lambda lax, x, y: lax.pow(x, y), [0.0, 0.0, 0.0, 0.0], [2.0, 1.0, 0.0, 0.5]),
    _kink("pow_negative_base", lambda lax, x, y: lax.pow(x, y), [-2.0, -0.5], [2.0, 3.0]),
    _kink("integer_pow_y0_y1", lambda lax, x: lax.add(lax.integer_pow(x, 0), lax.integer_pow(x, 1)), [0.0, 2.0]),
    _kink("atan2_at_origin", lambda lax, y, x: lax.atan2(y, x), [0.0, 0.0], [0.0, -1.0]),
    _kink("rem_exact", lambda lax, x, y: lax.rem(x, y), [4.0, -3.0], [2.0, 1.5]),
    _kink("div_by_0", lambda lax, x, y: lax.div(x, y), [1.0, 0.0], [0.0, 0.0]),
    _kink("cumprod_zeros", lambda lax, x: lax.cumprod(x, axis=0), [2.0, 0.0, 3.0, 0.0]),
    _kink("reduce_prod_zeros", lambda lax, x: lax.reduce_prod(x, (0,)), [2.0, 0.0, 3.0, 0.0]),
    _kink("cumlogsumexp_-inf", lambda lax, x: lax.cumlogsumexp(x, axis=0), [-np.inf, 0.0, 1.0]),
]

ALL_CASES = CASES + KINK_CASES
BY_ID = {c.id: c for c in ALL_CASES}
assert len(BY_ID) == len(ALL_CASES)


# --- evaluating a case ----------------------------------------------------------------------------------

def _args(case, dtype):
    """The operands of ``case`` in float ``dtype`` (complex operands in the matching complex dtype)."""
    out = []
    for i, v in enumerate(case.args64 if dtype == F64 and case.args64 is not None else case.args):
        d = case.fixed[i] if i < len(case.fixed) and case.fixed[i] is not None else dtype
        if np.iscomplexobj(v):
            d = np.result_type(d, np.complex64)
        out.append(np.asarray(v, d))
    return tuple(out)


def _weights(case, out):
    """Fixed random weights for the real (and imaginary) part of ``case``'s output (an array or a shape struct)."""
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    real = np.empty(0, out.dtype).real.dtype
    return [np.asarray(rng.uniform(0.5, 2.0, out.shape) * rng.choice([-1, 1], out.shape), real) for _ in range(2)]


def _loss(module, case, weights):
    """A weighted sum of ``case``'s output, a real scalar."""
    np_ = module.numpy

    def loss(*args):
        out = case.fn(module.lax, *args)
        if np.issubdtype(out.dtype, np.complexfloating):
            return np_.sum(np_.real(out) * weights[0]) + np_.sum(np_.imag(out) * weights[1])
        return np_.sum(out * weights[0])
    return loss


def _derivatives(module, case, args, weights, second=True):
    """The gradient of the weighted sum with respect to every operand and (if ``second``), for real operands,
    the gradient of a weighted sum of that gradient (Hessian-vector products): two lists of arrays."""
    nums = tuple(range(len(args)))
    grad = module.grad(_loss(module, case, weights), argnums=nums)
    rng = np.random.default_rng(zlib.crc32(case.id.encode()) + 1)
    vs = [np.asarray(rng.uniform(-1, 1, a.shape), a.dtype) for a in args]
    if not second or case.order < 2 or any(np.issubdtype(a.dtype, np.complexfloating) for a in args):
        return list(grad(*args)), []

    def gv(*xs):
        return sum(module.numpy.sum(g * v) for g, v in zip(grad(*xs), vs))
    return list(grad(*args)), list(module.grad(gv, argnums=nums)(*args))


def _compare(got, want, rtol, what):
    """Messages for the elements of ``got`` beyond ``rtol`` of ``want`` (relative to the largest |want|)."""
    errors = []
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            errors.append(f"{what} of operand {i}: {g.dtype}{g.shape} vs JAX's {w.dtype}{w.shape}")
            continue
        finite = np.isfinite(w)
        scale = max(1.0, float(np.max(np.abs(w[finite]), initial=0)))
        with np.errstate(invalid="ignore"):
            close = np.abs(g.astype(complex) - w.astype(complex)) <= rtol * np.maximum(np.abs(w), 1e-2 * scale)
        bad = ~(close | (g == w) | (np.isnan(g) & np.isnan(w)))
        if bad.any():
            errors.append(f"{what} of operand {i}: got {g[bad][:4].tolist()} want {w[bad][:4].tolist()}")
    return errors


def _jax_reference(dtype):
    """{case id: JAX's derivatives} for every case in ``dtype``, in one ``jax.jit`` (eager JAX compiles each op)."""
    import jax
    cases = [c for c in ALL_CASES if dtype == F64 or not c.x64_only]
    all_args = [_args(c, dtype) for c in cases]
    all_weights = [_weights(c, jax.eval_shape(functools.partial(c.fn, jax.lax), *a))
                   for c, a in zip(cases, all_args)]

    def everything(all_args):
        return [_derivatives(jax, c, a, w) for c, a, w in zip(cases, all_args, all_weights)]
    outs = jax.jit(everything)(all_args)
    return {c.id: ([np.asarray(x) for x in g], [np.asarray(x) for x in g2]) for c, (g, g2) in zip(cases, outs)}


def _vs_jax(case, dtype, derivs, reference):
    """irax's derivatives ``derivs`` against JAX's (``reference[case.id]``): a list of messages. Second-order
    products are compared where both were computed."""
    want, want2 = reference[case.id]
    got, got2 = derivs
    tol = (case.jax_rtol, case.jax_rtol2) if dtype == F32 else (case.jax_rtol64, 1e-10)
    return _compare(got, want, tol[0], "gradient") + (_compare(got2, want2, tol[1], "second-order product")
                                                     if got2 else [])


def _check_grads_kwargs(case, dtype):
    if dtype == F32:
        return dict(atol=case.tol, rtol=case.tol, eps=case.eps32)
    return dict(atol=case.tol64, rtol=case.tol64, eps=case.eps64)


def _irax_derivatives(case, dtype):
    import irax
    args = _args(case, dtype)
    return _derivatives(irax, case, args, _weights(case, case.fn(irax.lax, *args)))


def _jitted_group(cases, dtype, reference, second=False):
    """{case id: messages} for irax's gradients (and second-order products if ``second``) of every case of
    ``cases``, all in one ``irax.jit`` function (one compile), against JAX's ``reference``."""
    import irax
    all_args = [_args(c, dtype) for c in cases]
    all_weights = [_weights(c, c.fn(irax.lax, *a)) for c, a in zip(cases, all_args)]

    def everything(all_args):
        return [_derivatives(irax, c, a, w, second) for c, a, w in zip(cases, all_args, all_weights)]
    try:
        outs = irax.jit(everything)(all_args)
    except Exception:
        return {c.id: [f"jit failed: {traceback.format_exc()[-3000:]}"] for c in cases}
    report = {}
    for c, (g, g2) in zip(cases, outs):
        try:
            report[c.id] = _vs_jax(c, dtype, ([np.asarray(x) for x in g], [np.asarray(x) for x in g2]), reference)
        except Exception:
            report[c.id] = [traceback.format_exc()[-3000:]]
    return report


# --- the float64 child ----------------------------------------------------------------------------------

# Also jitted in float64, in one function with second-order products (float64 transcendentals are expanded in
# StableHLO: slow to compile, so not every case).
X64_JIT = ["exp", "log", "tanh", "sin", "atan", "integer_pow_y-2", "pow", "atan2", "div", "max", "select_n_bool",
           "reduce_sum", "reduce_max", "cumsum", "broadcast_in_dim", "transpose", "pad", "dynamic_update_slice",
           "dot_general_batch", "complex", "conj", "convert_element_type_f32_to_f64",
           "convert_element_type_f64_to_f32"]


def child_main():
    """The float64 report, printed as one JSON line: {case id: {"errors": [...], "jitted": bool}}."""
    import irax
    from irax.test_util import check_grads
    reference = _jax_reference(F64) if importlib.util.find_spec("jax") else None
    report = {}
    for case in CASES:
        entry = report[case.id] = {"errors": [], "jitted": False}
        try:
            if case.finite_differences:
                check_grads(functools.partial(case.fn, irax.lax), _args(case, F64), order=case.order,
                            modes=("fwd", "rev"), **_check_grads_kwargs(case, F64))
        except Exception:
            entry["errors"].append(f"check_grads: {traceback.format_exc()[-2500:]}")
        try:
            derivs = _irax_derivatives(case, F64)
            if reference is not None:
                entry["errors"] += _vs_jax(case, F64, derivs, reference)
        except Exception:
            entry["errors"].append(f"gradients: {traceback.format_exc()[-2500:]}")
    if reference is not None:
        for cid, errors in _jitted_group([BY_ID[i] for i in X64_JIT], F64, reference, second=True).items():
            report[cid]["errors"] += [f"jit: {e}" for e in errors]
            report[cid]["jitted"] = True
    print(json.dumps(report))


# --- sharing work between pytest-xdist workers ----------------------------------------------------------

_children: list = []


def _start_x64_child(root):
    """Starts the float64 child in the background, once per run (the first caller wins); it writes its stdout,
    stderr and exit status to files in ``root``."""
    try:
        os.close(os.open(root / "test_grad_ops-x64.started", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    env = dict(os.environ, JAX_ENABLE_X64="1", JAX_PLATFORMS="cpu")
    script = '"$0" "$1" > "$2" 2> "$3"; echo $? > "$4.tmp" && mv "$4.tmp" "$4"'
    _children.append(subprocess.Popen(
        ["/bin/sh", "-c", script, sys.executable, os.path.abspath(__file__),
         *(str(root / f"test_grad_ops-x64.{k}") for k in ("out", "err", "rc"))], env=env, start_new_session=True))


@pytest.fixture(scope="session")
def x64_child(tmp_path_factory):
    """The directory of the float64 child's files; at the end of the session, waits for a child this process
    started (the other workers may still read its report)."""
    root = shared_root(tmp_path_factory)
    yield root
    for proc in _children:
        try:
            proc.wait(timeout=600)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)   # its own session: the shell and the child
            proc.wait()


@pytest.fixture(autouse=True, scope="module")
def _early_x64_child(request, x64_child):
    """Starts the float64 child at this module's first test when any float64 test is selected, so that it
    runs while the float32 tests do."""
    if any(item.originalname == "test_float64" for item in request.session.items
           if getattr(item, "module", None) is request.module):
        _start_x64_child(x64_child)


def _x64_report(root):
    _start_x64_child(root)
    rc_path = root / "test_grad_ops-x64.rc"
    deadline = time.monotonic() + 900
    while not rc_path.exists():
        assert time.monotonic() < deadline, "the x64 child did not finish in 900 s"
        time.sleep(0.05)
    rc = rc_path.read_text().strip()
    out = (root / "test_grad_ops-x64.out").read_text()
    lines = [line for line in out.splitlines() if line.startswith("{")]
    err = (root / "test_grad_ops-x64.err").read_text()
    assert rc == "0" and lines, f"the x64 child failed (exit {rc}):\n{out[-3000:]}\n{err[-5000:]}"
    return json.loads(lines[-1])


def _jax():
    return pytest.importorskip("jax")


def _jax_f32(shared):
    _jax()
    return shared("grad_ops-jax-float32", lambda: _jax_reference(F32))


# --- the tests ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", F32_CASES, ids=[c.id for c in F32_CASES])
def test_check_grads_float32(case):
    import irax
    from irax.test_util import check_grads
    check_grads(functools.partial(case.fn, irax.lax), _args(case, F32), order=case.order, modes=("fwd", "rev"),
                **_check_grads_kwargs(case, F32))


@pytest.mark.parametrize("case", F32_CASES, ids=[c.id for c in F32_CASES])
def test_grad_vs_jax_float32(case, shared):
    reference = _jax_f32(shared)
    derivs = _irax_derivatives(case, F32)
    assert [np.asarray(g).dtype for g in derivs[0]] == [a.dtype for a in _args(case, F32)]
    errors = _vs_jax(case, F32, derivs, reference)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("case", KINK_CASES, ids=[c.id for c in KINK_CASES])
def test_grad_vs_jax_at_kinks_float32(case, shared):
    errors = _vs_jax(case, F32, _irax_derivatives(case, F32), _jax_f32(shared))
    assert not errors, "\n".join(errors)


JIT_CASES = [c for c in ALL_CASES if c.group and not c.x64_only]


@pytest.mark.parametrize("case", JIT_CASES, ids=[c.id for c in JIT_CASES])
def test_jit_grad_vs_jax_float32(case, shared):
    reference = _jax_f32(shared)
    cases = [c for c in JIT_CASES if c.group == case.group]
    errors = shared(f"grad_ops-jit-{case.group}", lambda: _jitted_group(cases, F32, reference))[case.id]
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_float64(case, x64_child, shared):
    entry = shared("grad_ops-x64", lambda: _x64_report(x64_child))[case.id]
    assert not entry["errors"], "\n".join(entry["errors"][:5])
    if case.id in X64_JIT:
        assert entry["jitted"] or importlib.util.find_spec("jax") is None, "the jitted float64 group did not run"


def test_enough_float64_cases():
    assert len(CASES) >= 20 and len(X64_JIT) >= 10


def test_polygamma_has_no_derivative_in_m():
    import irax
    with pytest.raises(ValueError, match="polygamma gradient with respect to m is not supported"):
        irax.grad(lambda m: irax.lax.polygamma(m, np.float32(2.5)))(np.float32(1.0))


def test_polygamma_matches_jax_eager_and_jitted():
    import irax
    jax = pytest.importorskip("jax")
    m = np.array([0, 1, 2, 3, 1, 4, 1.5, -1, 2], np.float32)
    x = np.array([0.5, 1.0, 2.5, 7.0, 30.0, 0.25, 2.0, 2.0, 0.0], np.float32)
    expected = np.asarray(jax.lax.polygamma(m, x))
    np.testing.assert_allclose(np.asarray(irax.lax.polygamma(m, x)), expected, rtol=2e-6)
    np.testing.assert_allclose(np.asarray(irax.jit(irax.lax.polygamma)(m, x)), expected, rtol=2e-6)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    child_main()
